// Every section and key pvfs.toml(5) knows, and the check that a parsed
// file holds nothing else: a typo ("[timeout]", "stripe_sise") is an error
// naming the file and the key, with the likely intended name, rather than
// a setting silently left at its default. Internal to config/ (it sees
// toml++); the list must follow Config::load and man/pvfs.toml.5.
// Pure; thread-safe.
#pragma once

#include <filesystem>

#include <toml++/toml.h>

#include "shared/status.h"

namespace pvfs::config_keys {

// invalid_argument when `root` (the file `file`) has a top-level key, a
// section, or a key inside a section or a [[mds]]/[[server]] entry that
// the config does not know, or a section that is not a table. The detail
// is one line: "FILE: unknown key 'layout.stripe_sise' (did you mean
// 'layout.stripe_size'?)". OK otherwise (values are checked by load()).
Status check(const toml::table& root, const std::filesystem::path& file);

}  // namespace pvfs::config_keys
