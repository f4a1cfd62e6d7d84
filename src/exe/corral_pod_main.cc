#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/local/pod_supervisor.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "start") == 0) return corral::podStartCommand(argv[2]);
  if (argc >= 3 && (std::strcmp(argv[1], "mount") == 0 || std::strcmp(argv[1], "umount") == 0))
    return corral::podMountCommand(argv[2], argv[1], std::vector<std::string>(argv + 3, argv + argc));
  std::fprintf(stderr,
               "usage: corral-pod start SPEC.json\n"
               "       corral-pod mount SPEC.json SOURCE TARGET ro|rw\n"
               "       corral-pod umount SPEC.json TARGET\n"
               "(run by corrald; not meant to be run by hand)\n");
  return 2;
}
