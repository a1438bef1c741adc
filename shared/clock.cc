#include "shared/clock.h"

namespace pvfs {

const Clock& real_clock() {
  static const RealClock clock;
  return clock;
}

}  // namespace pvfs
