#include "common/child.h"

#include <fcntl.h>
#include <unistd.h>

namespace corral {

void stdioToDevNull() {
  int devnull = open("/dev/null", O_RDWR);
  if (devnull < 0) return;
  dup2(devnull, 0);
  dup2(devnull, 1);
  dup2(devnull, 2);
  if (devnull > 2) close(devnull);
}

}  // namespace corral
