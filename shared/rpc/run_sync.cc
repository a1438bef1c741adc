#include "shared/rpc/run_sync.h"

#include <kj/exception.h>

namespace pvfs::rpc {

Status internal_error(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const kj::Exception& ex) {  // not a std::exception
    return Status(Errc::io, std::string("internal error: ") + ex.getDescription().cStr());
  } catch (const std::exception& ex) {
    return Status(Errc::io, std::string("internal error: ") + ex.what());
  } catch (...) {
    return Status(Errc::io, "internal error: an exception of unknown type");
  }
}

}  // namespace pvfs::rpc
