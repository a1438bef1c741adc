// Lets doctest print an Errc by name in a failed CHECK (e.g. "not_found"
// rather than a number). Include in a test file; header-only.
#pragma once

#include <ostream>

#include "shared/status.h"

namespace pvfs {
inline std::ostream& operator<<(std::ostream& os, Errc code) { return os << errc_name(code); }
}  // namespace pvfs
