// A scenario's parameters: each has a name, a type, a default for the full
// run and one for --quick, and a line of help; the command line overrides
// them with key=value. Validated once, when made, so a scenario reads them
// without error handling. Plain values; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared/status.h"

namespace pvfs::sim {

enum class ParamType {
  integer,  // a whole number, "1000"
  number,   // a real number, "0.5"
  numbers,  // comma-separated real numbers, "0,0.1,0.2"
  words,    // comma-separated words, "fixed,random"
};

struct ParamSpec {
  std::string key;
  ParamType type = ParamType::number;
  std::string full;   // default of a full run
  std::string quick;  // default under --quick (empty: same as full)
  std::string help;
};

class Params {
 public:
  // The parameters of `specs` for a full or quick run, with `overrides`
  // ("key=value") applied in order. invalid_argument naming the key for an
  // unknown key, a missing '=', or a value that is not of the key's type
  // (or an empty list).
  static Result<Params> make(const std::vector<ParamSpec>& specs, bool quick,
                             const std::vector<std::string>& overrides);

  // Typed reads; reading a key of another type or not in the specs is a
  // bug (checked).
  int64_t integer(std::string_view key) const;
  double number(std::string_view key) const;
  std::vector<double> numbers(std::string_view key) const;
  std::vector<std::string> words(std::string_view key) const;

  // Every parameter as "key=value", in key order (for CSV headers and the
  // gnuplot script's comment).
  std::vector<std::string> describe() const;

 private:
  struct Value {
    ParamType type;
    std::string text;
  };
  const Value& find(std::string_view key, ParamType type) const;
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace pvfs::sim
