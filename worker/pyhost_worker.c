/* pyhost_worker.c: pyhost's worker program, the process of a plugin loaded with
 * PYHOST_ISOLATION_PROCESS (docs/plugins.md, "Isolation").  pyhost starts it with the
 * ends of its channels on the command line; everything it does is the library's
 * (src/bridge/worker.c), linked in statically so that it runs wherever it is
 * installed, whichever libpyhost a host uses. */
int pyhost__worker_main(int argc, char **argv);

int main(int argc, char **argv) {
  return pyhost__worker_main(argc, argv);
}

#if defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define PYHOST_WORKER_ASAN 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(PYHOST_WORKER_ASAN)
/* Built with AddressSanitizer (the sanitizer builds of the tests): a plugin's crash is
 * the plugin's, and its host reports the signal it ended by, as without the
 * sanitizer; the sanitizer still checks pyhost's own code here.  (ASAN_OPTIONS in the
 * environment still decides.) */
__attribute__((used)) const char *__asan_default_options(void);
__attribute__((used)) const char *__asan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0";
}
#endif
