/* pyhost_worker.c: pyhost's worker program, the process of a plugin loaded with
 * PYHOST_ISOLATION_PROCESS (docs/plugins.md, "Isolation").  pyhost starts it with the
 * ends of its channels on the command line; everything it does is the library's
 * (src/bridge/worker.c), linked in statically so that it runs wherever it is
 * installed, whichever libpyhost a host uses. */
int pyhost__worker_main(int argc, char **argv);

int main(int argc, char **argv) {
  return pyhost__worker_main(argc, argv);
}
