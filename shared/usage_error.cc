#include "shared/usage_error.h"

#include <cstdio>

#include <fmt/format.h>

namespace pvfs {

int usage_error(std::string_view program, std::string_view message) {
  fmt::print(stderr, "{}: {} (see {} --help)\n", program, message, program);
  return 2;
}

}  // namespace pvfs
