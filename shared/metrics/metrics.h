// A daemon's counters as plain values: metric families in the shape of the
// Prometheus data model (shared/proto/common.capnp MetricFamily mirrors it),
// and helpers to build and read them. The one representation pvfs-ctl
// stats/top and the /metrics endpoint all consume. Pure: no I/O, no clock,
// no Asio or Cap'n Proto. Plain values; thread-safe to copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pvfs::metrics {

enum class Type { counter, gauge, summary };

struct Label {
  std::string name;
  std::string value;
  bool operator==(const Label&) const = default;
};

struct Sample {
  std::vector<Label> labels;
  double value = 0;
  std::string suffix;  // appended to the family name ("_sum", "_count"); usually empty
  bool operator==(const Sample&) const = default;
};

struct Family {
  std::string name;  // pvfs_..., without a sample suffix; counters end in _total
  std::string help;  // one line
  Type type = Type::gauge;
  std::vector<Sample> samples;
  bool operator==(const Family&) const = default;
};

using Families = std::vector<Family>;

// "counter", "gauge", "summary" (the Prometheus TYPE words).
std::string_view type_name(Type type);

// Appends a family with one unlabelled sample.
void add_single(Families& out, std::string name, std::string help, Type type, double value);

// A family without samples, for the caller to fill and append.
Family make_family(std::string name, std::string help, Type type);

// The family called `name`, or nullptr.
const Family* find(const Families& families, std::string_view name);

// The value of the label `name` of `sample`, or nullopt.
std::optional<std::string_view> label(const Sample& sample, std::string_view name);

// The sum of the samples of family `name` with an empty suffix whose labels
// include every (name, value) of `match` (empty: all of them). 0 when the
// family is missing, so an absent counter reads as zero.
double sum(const Families& families, std::string_view name,
           const std::vector<Label>& match = {});

// The samples of family `name` with an empty suffix and no "quantile"
// label, grouped by the value of label `by`: (value, summed sample value),
// in the order first seen. Empty when the family is missing.
std::vector<std::pair<std::string, double>> by_label(const Families& families,
                                                     std::string_view name, std::string_view by);

}  // namespace pvfs::metrics
