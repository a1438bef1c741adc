#include "shared/rpc/metrics_wire.h"

namespace pvfs::rpc {

namespace {

proto::MetricType type_to_wire(metrics::Type t) {
  switch (t) {
    case metrics::Type::counter: return proto::MetricType::COUNTER;
    case metrics::Type::gauge: return proto::MetricType::GAUGE;
    case metrics::Type::summary: return proto::MetricType::SUMMARY;
  }
  return proto::MetricType::GAUGE;
}

metrics::Type type_from_wire(proto::MetricType t) {
  switch (t) {
    case proto::MetricType::COUNTER: return metrics::Type::counter;
    case proto::MetricType::SUMMARY: return metrics::Type::summary;
    default: return metrics::Type::gauge;
  }
}

}  // namespace

void to_wire(const metrics::Families& families, capnp::List<proto::MetricFamily>::Builder list) {
  for (unsigned i = 0; i < families.size(); ++i) {
    const auto& f = families[i];
    auto b = list[i];
    b.setName(f.name);
    b.setHelp(f.help);
    b.setType(type_to_wire(f.type));
    auto samples = b.initSamples(static_cast<unsigned>(f.samples.size()));
    for (unsigned j = 0; j < f.samples.size(); ++j) {
      const auto& s = f.samples[j];
      auto sb = samples[j];
      sb.setValue(s.value);
      if (!s.suffix.empty()) sb.setSuffix(s.suffix);
      auto labels = sb.initLabels(static_cast<unsigned>(s.labels.size()));
      for (unsigned k = 0; k < s.labels.size(); ++k) {
        labels[k].setName(s.labels[k].name);
        labels[k].setValue(s.labels[k].value);
      }
    }
  }
}

metrics::Families from_wire(capnp::List<proto::MetricFamily>::Reader list) {
  metrics::Families out;
  out.reserve(list.size());
  for (auto f : list) {
    metrics::Family family{f.getName(), f.getHelp(), type_from_wire(f.getType()), {}};
    for (auto s : f.getSamples()) {
      metrics::Sample sample;
      sample.value = s.getValue();
      sample.suffix = s.getSuffix();
      for (auto l : s.getLabels()) sample.labels.push_back({l.getName(), l.getValue()});
      family.samples.push_back(std::move(sample));
    }
    out.push_back(std::move(family));
  }
  return out;
}

std::vector<std::string> union_names(capnp::StructSchema schema) {
  std::vector<std::string> names(schema.getUnionFields().size());
  for (auto field : schema.getUnionFields()) {
    const uint16_t which = field.getProto().getDiscriminantValue();
    if (which >= names.size()) names.resize(which + 1u);
    std::string snake;
    for (char c : std::string_view(field.getProto().getName().cStr())) {
      if (c >= 'A' && c <= 'Z') {
        snake += '_';
        snake += static_cast<char>(c - 'A' + 'a');
      } else {
        snake += c;
      }
    }
    names[which] = std::move(snake);
  }
  return names;
}

}  // namespace pvfs::rpc
