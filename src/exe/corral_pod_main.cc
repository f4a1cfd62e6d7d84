#include <cstdio>
#include <cstring>

#include "runtime/local/pod_supervisor.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "start") == 0) return corral::podStartCommand(argv[2]);
  std::fprintf(stderr, "usage: corral-pod start SPEC.json\n(started by corrald; not meant to be run by hand)\n");
  return 2;
}
