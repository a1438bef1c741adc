#include "shared/metrics/metrics.h"

#include <algorithm>

namespace pvfs::metrics {

std::string_view type_name(Type type) {
  switch (type) {
    case Type::counter: return "counter";
    case Type::gauge: return "gauge";
    case Type::summary: return "summary";
  }
  return "untyped";
}

Family make_family(std::string name, std::string help, Type type) {
  return Family{std::move(name), std::move(help), type, {}};
}

void add_single(Families& out, std::string name, std::string help, Type type, double value) {
  out.push_back(Family{std::move(name), std::move(help), type, {Sample{{}, value, {}}}});
}

const Family* find(const Families& families, std::string_view name) {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

std::optional<std::string_view> label(const Sample& sample, std::string_view name) {
  for (const auto& l : sample.labels)
    if (l.name == name) return std::string_view(l.value);
  return std::nullopt;
}

double sum(const Families& families, std::string_view name, const std::vector<Label>& match) {
  const Family* f = find(families, name);
  if (!f) return 0;
  double total = 0;
  for (const auto& s : f->samples) {
    if (!s.suffix.empty()) continue;
    const bool matches = std::all_of(match.begin(), match.end(), [&](const Label& m) {
      auto v = label(s, m.name);
      return v && *v == m.value;
    });
    if (matches) total += s.value;
  }
  return total;
}

std::vector<std::pair<std::string, double>> by_label(const Families& families,
                                                     std::string_view name, std::string_view by) {
  std::vector<std::pair<std::string, double>> out;
  const Family* f = find(families, name);
  if (!f) return out;
  for (const auto& s : f->samples) {
    if (!s.suffix.empty() || label(s, "quantile")) continue;
    const std::string key(label(s, by).value_or(""));
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == key; });
    if (it == out.end()) out.emplace_back(key, s.value);
    else it->second += s.value;
  }
  return out;
}

}  // namespace pvfs::metrics
