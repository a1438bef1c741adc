// The fsck comparison: indexes the listings once, then walks objects,
// files, redirects and fragments. Pure; see fsck_check.h.
#include "utils/ctl/fsck_check.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace pvfs::fsck {

namespace {

std::string name(ObjectId o) { return fmt::format("object {} of inode {}", o.index, o.ino.value); }

struct Index {
  std::map<InodeId, const File*> files;
  std::map<ServerId, const ServerScan*> servers;
  bool all_answered = true;
  // Per server: its objects, and its redirect entries by object.
  std::map<ServerId, std::map<ObjectId, uint64_t>> objects;
  std::map<ServerId, std::map<ObjectId, std::vector<const Redirect*>>> redirects;
  // Per holder: the fragments it has, by (object, fragment id).
  std::map<ServerId, std::map<std::pair<ObjectId, uint64_t>, const Fragment*>> fragments;
  // (object, holder, fragment) of every redirect entry (gc ones included).
  std::set<std::tuple<ObjectId, ServerId, uint64_t>> referenced;

  explicit Index(const Input& in) {
    for (const File& f : in.files) files[f.ino] = &f;
    for (const ServerScan& s : in.servers) {
      servers[s.id] = &s;
      if (!s.answered) {
        all_answered = false;
        continue;
      }
      for (const auto& o : s.objects) objects[s.id][o.object] = o.size;
      for (const auto& r : s.redirects) {
        referenced.insert({r.object, r.server, r.fragment});
        if (r.length) redirects[s.id][r.object].push_back(&r);
      }
      for (const auto& f : s.fragments) fragments[s.id][{f.object, f.fragment}] = &f;
    }
  }

  bool answered(ServerId id) const {
    auto it = servers.find(id);
    return it != servers.end() && it->second->answered;
  }
  bool configured(ServerId id) const { return servers.count(id) != 0; }

  // The file owning `object` and its home server, or nullptr.
  const File* owner(ObjectId object) const {
    auto it = files.find(object.ino);
    return it == files.end() ? nullptr : it->second;
  }

  // Empty when the entry's fragment is where it says; "?" when that server
  // did not answer (unknown); else the end of a sentence saying what is wrong.
  std::string stale_reason(const Redirect& r) const {
    if (!configured(r.server)) return "which is not in the config";
    if (!answered(r.server)) return "?";
    auto held = fragments.find(r.server);
    const Fragment* f = nullptr;
    if (held != fragments.end()) {
      auto it = held->second.find({r.object, r.fragment});
      if (it != held->second.end()) f = it->second;
    }
    if (!f) return "which does not have it";
    if (!f->on_disk) return "where its file is gone";
    return {};
  }
};

void orphan_objects(const Index& ix, std::vector<Finding>& out) {
  for (const auto& [server, scan] : ix.servers) {
    if (!scan->answered) continue;
    // Objects with a file here, and objects with only redirected ranges here.
    std::map<ObjectId, uint64_t> here = ix.objects.count(server) ? ix.objects.at(server)
                                                                 : std::map<ObjectId, uint64_t>{};
    if (ix.redirects.count(server))
      for (const auto& [object, entries] : ix.redirects.at(server)) here.emplace(object, 0);
    for (const auto& [object, size] : here) {
      const File* f = ix.owner(object);
      std::string why;
      if (!f) why = fmt::format("no file has inode {}", object.ino.value);
      else if (object.index >= f->layout.stripe_count())
        why = fmt::format("the file has only {} objects", f->layout.stripe_count());
      else if (f->layout.servers[object.index] != server)
        why = fmt::format("its home is server {}", f->layout.servers[object.index].value);
      else continue;
      Finding x;
      x.kind = Kind::orphan_object;
      x.server = server;
      x.object = object;
      x.repair = Repair::remove_object;
      x.problem = fmt::format("orphan object: {} on server {} ({} bytes): {}", name(object), server.value,
                              size, why);
      x.repaired = fmt::format("removed {} on server {}", name(object), server.value);
      out.push_back(std::move(x));
    }
  }
}

// Whether some redirected range of `object` at `home` points at a fragment
// that is there, or may be (its holder did not answer).
bool has_live_redirect(const Index& ix, ServerId home, ObjectId object) {
  auto at = ix.redirects.find(home);
  if (at == ix.redirects.end()) return false;
  auto it = at->second.find(object);
  if (it == at->second.end()) return false;
  // A holder that did not answer may have it: unknown is not missing.
  return std::any_of(it->second.begin(), it->second.end(), [&](const Redirect* r) {
    const std::string why = ix.stale_reason(*r);
    return why.empty() || why == "?";
  });
}

// The first byte past the file's data: what its objects on their (answered)
// homes and its live redirected ranges hold, and a server holding it.
std::pair<uint64_t, ServerId> data_end(const Index& ix, const File& f) {
  uint64_t end = 0;
  ServerId where;
  for (uint32_t j = 0; j < f.layout.stripe_count(); ++j) {
    const ServerId home = f.layout.servers[j];
    const ObjectId object{f.ino, j};
    auto consider = [&](uint64_t object_end) {
      const uint64_t e = file_end_of_object(f.layout, j, object_end);
      if (e > end) {
        end = e;
        where = home;
      }
    };
    if (auto objects = ix.objects.find(home); objects != ix.objects.end())
      if (auto it = objects->second.find(object); it != objects->second.end()) consider(it->second);
    if (auto at = ix.redirects.find(home); at != ix.redirects.end())
      if (auto it = at->second.find(object); it != at->second.end())
        for (const Redirect* r : it->second)
          if (ix.stale_reason(*r).empty()) consider(r->offset + r->length);
  }
  return {end, where};
}

void missing_objects(const Index& ix, std::vector<Finding>& out) {
  for (const auto& [ino, f] : ix.files) {
    // An unlinked file's objects may be half deleted already: the MDS
    // removes them before it forgets the inode.
    if (!f->layout.valid() || f->orphan) continue;
    // Only below the end of the data the other objects hold: past it the
    // file was grown (truncate) or written sparsely, and nothing says an
    // object should exist there.
    const uint64_t end = std::min(f->size, data_end(ix, *f).first);
    for (uint32_t j = 0; j < f->layout.stripe_count(); ++j) {
      const ServerId home = f->layout.servers[j];
      if (object_size_for_file_size(f->layout, j, end) == 0) continue;
      const uint64_t expected = object_size_for_file_size(f->layout, j, f->size);
      const ObjectId object{ino, j};
      Finding x;
      x.kind = Kind::missing_object;
      x.server = home;
      x.object = object;
      if (!ix.configured(home)) {
        x.problem = fmt::format("missing object: {} lives on server {}, which is not in the config",
                                name(object), home.value);
        out.push_back(std::move(x));
        continue;
      }
      if (!ix.answered(home)) continue;
      auto objects = ix.objects.find(home);
      if (objects != ix.objects.end() && objects->second.count(object)) continue;
      if (has_live_redirect(ix, home, object)) continue;
      x.repair = Repair::create_object;
      x.size = expected;
      x.problem = fmt::format("missing object: {} is not on server {}, but the file's data goes on to byte "
                              "{}: its bytes there are lost (or a hole as large as the object)",
                              name(object), home.value, end);
      x.repaired = fmt::format("created {} on server {} empty ({} bytes): those bytes of the file read as "
                               "zeros",
                               name(object), home.value, expected);
      out.push_back(std::move(x));
    }
  }
}

void stale_redirects(const Index& ix, std::vector<Finding>& out) {
  for (const auto& [home, by_object] : ix.redirects) {
    for (const auto& [object, entries] : by_object) {
      // One finding per fragment, spanning its ranges.
      std::map<uint64_t, std::pair<uint64_t, uint64_t>> span;
      std::map<uint64_t, std::string> why;
      for (const Redirect* r : entries) {
        std::string reason = ix.stale_reason(*r);
        if (reason.empty() || reason == "?") continue;
        auto [it, fresh] = span.try_emplace(r->fragment, r->offset, r->offset + r->length);
        if (!fresh) {
          it->second.first = std::min(it->second.first, r->offset);
          it->second.second = std::max(it->second.second, r->offset + r->length);
        }
        why[r->fragment] = fmt::format("fragment {:x} on server {}, {}", r->fragment, r->server.value, reason);
      }
      for (const auto& [fragment, range] : span) {
        Finding x;
        x.kind = Kind::stale_redirect;
        x.server = home;
        x.object = object;
        x.fragment = fragment;
        x.repair = Repair::drop_redirect;
        x.problem = fmt::format("stale redirect: bytes [{}, {}) of {} on server {} point at {}", range.first,
                                range.second, name(object), home.value, why[fragment]);
        x.repaired = fmt::format("dropped the redirect on server {}: bytes [{}, {}) of {} now read server "
                                 "{}'s older bytes",
                                 home.value, range.first, range.second, name(object), home.value);
        out.push_back(std::move(x));
      }
    }
  }
}

void orphan_fragments(const Index& ix, std::chrono::milliseconds grace, std::vector<Finding>& out) {
  for (const auto& [holder, held] : ix.fragments) {
    for (const auto& [key, f] : held) {
      if (ix.referenced.count({f->object, holder, f->fragment})) continue;
      // Only the object's home may refer to it: it must have answered (or,
      // without a file to name the home, every server must have).
      const File* owner = ix.owner(f->object);
      const bool home_known = owner && f->object.index < owner->layout.stripe_count();
      if (home_known ? !ix.answered(owner->layout.servers[f->object.index]) : !ix.all_answered) continue;
      // A write stores the fragment before it records the redirect.
      if (f->on_disk && f->age_ms < static_cast<uint64_t>(grace.count())) continue;
      Finding x;
      x.kind = Kind::orphan_fragment;
      x.server = holder;
      x.object = f->object;
      x.fragment = f->fragment;
      x.repair = Repair::drop_fragment;
      x.problem = f->on_disk ? fmt::format("orphan fragment: {:x} of {} on server {} ({} bytes, {} s old): no "
                                           "redirect entry refers to it",
                                           f->fragment, name(f->object), holder.value, f->bytes,
                                           f->age_ms / 1000)
                             : fmt::format("orphan fragment: {:x} of {} on server {} is recorded but its file "
                                           "is gone, and no redirect entry refers to it",
                                           f->fragment, name(f->object), holder.value);
      x.repaired = fmt::format("dropped fragment {:x} on server {}", f->fragment, holder.value);
      out.push_back(std::move(x));
    }
  }
}

void size_mismatches(const Index& ix, std::vector<Finding>& out) {
  for (const auto& [ino, f] : ix.files) {
    if (!f->layout.valid()) continue;
    const auto [end, where] = data_end(ix, *f);
    if (end <= f->size) continue;  // a size past the data is a sparse tail
    Finding x;
    x.kind = Kind::size_mismatch;
    x.server = where;
    x.object = ObjectId{ino, 0};
    x.size = end;
    x.repair = Repair::update_size;
    x.problem = fmt::format("size mismatch: inode {} is {} bytes at the metadata server, but its data on "
                            "server {} reaches byte {}",
                            ino.value, f->size, where.value, end);
    x.repaired = fmt::format("set the size of inode {} to {} bytes", ino.value, end);
    out.push_back(std::move(x));
  }
}

}  // namespace

uint64_t file_end_of_object(const Layout& layout, uint32_t index, uint64_t object_bytes) {
  if (object_bytes == 0) return 0;
  const uint64_t last = object_bytes - 1;
  const uint64_t stripe = (last / layout.stripe_size) * layout.stripe_count() + index;
  return stripe * layout.stripe_size + last % layout.stripe_size + 1;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::orphan_object: return "orphan object";
    case Kind::missing_object: return "missing object";
    case Kind::stale_redirect: return "stale redirect";
    case Kind::orphan_fragment: return "orphan fragment";
    case Kind::size_mismatch: return "size mismatch";
  }
  return "?";
}

std::vector<Finding> check(const Input& input) {
  const Index ix(input);
  std::vector<Finding> out;
  orphan_objects(ix, out);
  missing_objects(ix, out);
  stale_redirects(ix, out);
  orphan_fragments(ix, input.grace, out);
  size_mismatches(ix, out);
  std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return std::tie(a.object, a.kind, a.server, a.fragment) < std::tie(b.object, b.kind, b.server, b.fragment);
  });
  return out;
}

}  // namespace pvfs::fsck
