// pvfs-ctl genconfig: writes the config of a multi-host cluster and a fresh
// key file from the daemons' addresses. Planning (parse_daemon_list,
// plan_config) is pure and unit-tested; genconfig() writes the files and
// prints the next steps. Option parsing is in utils/ctl/pvfs_ctl.cc.
// Blocking; not thread-safe (it writes files).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "shared/status.h"

namespace pvfs::ctl {

struct GenconfigOptions {
  std::string mds;                        // "host:port[,...]", entries may be "id=host:port"
  std::string servers;                    // the same for storage servers
  std::filesystem::path data_dir;         // absolute; each daemon gets data_dir/mdsN or /serverN
  std::filesystem::path out = "pvfs.toml";
  std::filesystem::path key;              // empty: secret.key beside `out`
  uint64_t stripe_size = uint64_t{1} << 20;
  uint32_t stripe_count = 0;              // 0: all servers
  bool force = false;                     // overwrite `out` and the key file
};

// Parses a comma list of "host:port" or "id=host:port" entries (`what`, e.g.
// "--servers", names the list in errors). Entries without an id get their
// position in the list. data_dir is left empty. Errors (invalid_argument, one
// line naming the entry): a malformed address or id, port 0 (a deployment
// needs fixed ports), an empty list or entry, a repeated id.
Result<std::vector<DaemonEntry>> parse_daemon_list(std::string_view text, std::string_view what);

// The Config genconfig writes for `options`, whose secret_file is `key_ref`
// (the text the config will hold). Pure. Errors (invalid_argument, one
// line): those of parse_daemon_list, an address used twice (also across the
// two lists), a data_dir that is not absolute, a stripe size that is not a
// positive multiple of 4096, a stripe count above the number of servers.
Result<Config> plan_config(const GenconfigOptions& options, const std::string& key_ref);

// Writes the config and a fresh key (mode 0600) and prints what it wrote and
// the next steps on stdout; errors are one "pvfs-ctl: genconfig: ..." line on
// stderr. Refuses (before writing anything) when either file exists, unless
// options.force. Returns the exit status: 0, or 1.
int genconfig(const GenconfigOptions& options);

}  // namespace pvfs::ctl
