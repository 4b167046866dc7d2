// plugin_host.cpp: the plugin host of docs/cpp.md in C++ (include/pyhost.hpp).  Starts
// the Python library named on the command line, gives Python a host function
// (app.scale), loads a plugin that imports json, calls its hook with a keyword argument
// for a typed result, and prints the traceback when the plugin raises.
//   example_cpp LIBPYTHON PLUGIN.py
#include <pyhost.hpp>

#include <cstdio>

using namespace pyh::literals;

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s LIBPYTHON PLUGIN.py\n", argv[0]);
    return 64;
  }
  try {
    pyh::interpreter py(argv[1]);
    auto app = py.module("app");
    app.def("scale", [](double x) { return x * 1.5; });
    auto scorer = py.load_plugin(argv[2]);
    double s = scorer.call<double>("score", "[1, 2, 3.5]", "weight"_kw = 2);
    std::printf("score = %g\n", s);
    scorer.call<double>("score", "not json");
  } catch (const pyh::error &e) {
    std::printf("%s:\n%s\n", e.type_name().c_str(), e.what());
    return 1;
  }
}
