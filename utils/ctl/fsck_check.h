// The judgement of pvfs-ctl fsck: given what the metadata server and every
// storage server listed (plain values, see utils/ctl/fsck.h for the walk that
// gathers them), the problems and the safe repair of each. Pure: no I/O, no
// clock (fragment ages come in the input), deterministic output order.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "shared/attr.h"
#include "shared/ids.h"
#include "shared/layout.h"

namespace pvfs::fsck {

// A regular file at the MDS: linked, or unlinked but kept (orphan) while a
// client has it open or its objects are not deleted yet.
using File = FileInfo;  // shared/attr.h

// An object file on a storage server.
struct StoredObject {
  ObjectId object;
  uint64_t size = 0;  // bytes of the file (redirected ranges not included)
};

// A fragment a storage server holds for another server's object.
struct Fragment {
  ObjectId object;
  uint64_t fragment = 0;
  uint64_t bytes = 0;
  uint64_t age_ms = 0;   // since it was last written
  bool on_disk = true;   // false: recorded as held, but its file is gone
};

// A range of an object homed on the listing server that lives in a fragment
// elsewhere. length 0: no range; the fragment is queued for the garbage
// collector and must not be called an orphan.
struct Redirect {
  ObjectId object;
  uint64_t offset = 0, length = 0;
  ServerId server;  // holds the fragment
  uint64_t fragment = 0;
};

// What one storage server of the config listed.
struct ServerScan {
  ServerId id;
  bool answered = false;  // false: nothing is known of it; checks needing it are skipped
  std::vector<StoredObject> objects;
  std::vector<Fragment> fragments;
  std::vector<Redirect> redirects;
};

struct Input {
  std::vector<File> files;
  std::vector<ServerScan> servers;  // one per storage server in the config
  // Younger fragments without a redirect entry are a write in flight (the
  // client stores the fragment before recording the redirect), not orphans.
  std::chrono::milliseconds grace{60000};
};

enum class Kind {
  orphan_object,    // an object no file owns: no such inode, index past its stripes, or not its home
  missing_object,   // a file's object below the end of its data does not exist, nothing of it redirected
  stale_redirect,   // a redirect entry names a fragment its server does not have (or no such server)
  orphan_fragment,  // a fragment no redirect entry refers to, older than the grace period
  size_mismatch,    // data lies past the size the MDS has for the file
};

enum class Repair {
  none,           // nothing safe to do (the fix needs a person)
  remove_object,  // remove `object` on `server`
  create_object,  // create `object` on `server` empty, `size` bytes long (truncate)
  drop_redirect,  // dropRedirect of (`object`, `fragment`) on `server` (the home)
  drop_fragment,  // dropFragments of (`object`, `fragment`) on `server` (the holder)
  update_size,    // updateSize of inode `object.ino` to `size` at the MDS
};

struct Finding {
  Kind kind = Kind::orphan_object;
  ServerId server;       // where the problem is and the repair goes (not for update_size)
  ObjectId object;       // size_mismatch: {ino, 0}
  uint64_t fragment = 0;  // stale_redirect, orphan_fragment
  uint64_t size = 0;     // create_object: object bytes; update_size: file bytes
  Repair repair = Repair::none;
  std::string problem;   // one line: what is wrong, naming it
  std::string repaired;  // one line: what the repair did and what the user will see
};

// Every problem in `input`, ordered by inode, object index, kind, server
// and fragment. A healthy cluster yields none. Objects of orphan files are
// theirs, not orphans. Checks that need a server that did not answer are
// skipped, so an unanswered server hides problems but invents none.
std::vector<Finding> check(const Input& input);

// "orphan object", "missing object", ...: the kind as the output names it.
const char* kind_name(Kind kind);

// The first byte past the file bytes that `object_bytes` bytes of object
// `index` hold (0 when object_bytes is 0). Requires layout.valid().
uint64_t file_end_of_object(const Layout& layout, uint32_t index, uint64_t object_bytes);

}  // namespace pvfs::fsck
