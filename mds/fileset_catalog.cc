#include "mds/fileset_catalog.h"

#include <charconv>
#include <string>

#include <fmt/format.h>

namespace pvfs::mds {

namespace {
constexpr std::string_view kPrefix = "fileset-";
}  // namespace

std::optional<uint16_t> FileSetCatalog::parse_dir_name(const std::string& name) {
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  unsigned value = 0;
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last || first == last || value > 0xffff) return std::nullopt;
  return static_cast<uint16_t>(value);
}

std::filesystem::path FileSetCatalog::dir_of(FileSetId set) const {
  return data_dir_ / (std::string(kPrefix) + std::to_string(set.value));
}

Result<std::unique_ptr<FileSetCatalog>> FileSetCatalog::open(const std::filesystem::path& data_dir,
                                                             Timespec now, bool create_root) {
  std::unique_ptr<FileSetCatalog> catalog(new FileSetCatalog(data_dir));
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Status(Errc::io, "cannot create " + data_dir.string() + ": " + ec.message());
  std::vector<uint16_t> ids;
  if (create_root) ids.push_back(0);
  std::vector<std::filesystem::path> leftovers;
  for (const auto& item : std::filesystem::directory_iterator(data_dir, ec)) {
    const std::string name = item.path().filename().string();
    auto id = parse_dir_name(name);
    if (id && (*id != 0 || !create_root) && item.is_directory()) ids.push_back(*id);
    if (name.starts_with(kPrefix) && name.find(".incoming-") != std::string::npos)
      leftovers.push_back(item.path());
  }
  for (const auto& dir : leftovers) std::filesystem::remove_all(dir, ec);
  if (ec) return Status(Errc::io, "cannot list " + data_dir.string() + ": " + ec.message());
  for (uint16_t id : ids) {
    auto opened = catalog->open_locked(FileSetId(id), now);
    if (!opened) return opened.status();
  }
  return catalog;
}

Result<NamespaceStore*> FileSetCatalog::open_locked(FileSetId set, Timespec now, FileSetLock held) {
  const auto dir = dir_of(set);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Errc::io, "cannot create " + dir.string() + ": " + ec.message());
  if (held.held() && !held.still_at(dir))
    return Status(Errc::io, dir.string() + " is not the directory its lock was taken on");
  auto lock = held.held() ? Result<FileSetLock>(std::move(held)) : FileSetLock::acquire(dir);
  if (!lock) {
    if (lock.code() == Errc::busy)
      return Status(Errc::busy, dir.string() + " is in use by another process (another pvfs-mds on "
                                               "this data dir, or a member taking it over)");
    return lock.status();
  }
  auto store = NamespaceStore::open(dir, set, now);
  if (!store) return Status(store.code(), dir.string() + ": " + store.status().detail());
  NamespaceStore* raw = store->get();
  sets_[set.value] = std::move(*store);
  locks_[set.value] = std::move(*lock);
  return raw;
}

NamespaceStore* FileSetCatalog::find(InodeId ino) const { return find(ino.fileset()); }

NamespaceStore* FileSetCatalog::find(FileSetId set) const {
  auto it = sets_.find(set.value);
  return it == sets_.end() ? nullptr : it->second.get();
}

std::shared_ptr<NamespaceStore> FileSetCatalog::share(FileSetId set) const {
  auto it = sets_.find(set.value);
  return it == sets_.end() ? nullptr : it->second;
}

std::vector<uint16_t> FileSetCatalog::ids() const {
  std::vector<uint16_t> out;
  for (const auto& [id, store] : sets_) out.push_back(id);
  return out;
}

Result<NamespaceStore*> FileSetCatalog::create(FileSetId set, Timespec now) {
  if (sets_.count(set.value)) return Status(Errc::exists, fmt::format("file set {} exists", set.value));
  const auto dir = dir_of(set);
  // A directory left by a crash between making a set and linking it in
  // holds nothing reachable: start it afresh.
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return open_locked(set, now);
}

Result<NamespaceStore*> FileSetCatalog::adopt(FileSetId set, Timespec now) {
  if (sets_.count(set.value)) return Status(Errc::exists, fmt::format("file set {} exists", set.value));
  return open_locked(set, now);
}

Result<NamespaceStore*> FileSetCatalog::adopt(FileSetId set, Timespec now, FileSetLock held) {
  if (sets_.count(set.value)) return Status(Errc::exists, fmt::format("file set {} exists", set.value));
  return open_locked(set, now, std::move(held));
}

Result<NamespaceStore*> FileSetCatalog::create(uint64_t seed, Timespec now) {
  // Ids 1..65535; file set 0 is the namespace root.
  for (uint32_t i = 0; i < 0xffff; ++i) {
    const auto id = static_cast<uint16_t>(1 + (seed + i) % 0xffff);
    if (!sets_.count(id)) return create(FileSetId(id), now);
  }
  return Status(Errc::no_space, "every file set id is taken");
}

Status FileSetCatalog::destroy(FileSetId set) {
  auto it = sets_.find(set.value);
  if (it == sets_.end()) return Status(Errc::not_found, "no such file set");
  sets_.erase(it);  // a sync in flight keeps its own reference until it returns
  std::error_code ec;
  std::filesystem::remove_all(dir_of(set), ec);
  locks_.erase(set.value);
  if (ec) return Status(Errc::io, "cannot delete " + dir_of(set).string() + ": " + ec.message());
  return {};
}

void FileSetCatalog::release_locks() {
  for (auto& [id, lock] : locks_) lock.release();
}

std::vector<uint16_t> FileSetCatalog::reacquire_locks() {
  std::vector<uint16_t> lost;
  for (auto& [id, lock] : locks_)
    if (!lock.reacquire(dir_of(FileSetId(id))).ok()) lost.push_back(id);
  for (uint16_t id : lost) {
    sets_.erase(id);
    locks_.erase(id);
  }
  return lost;
}

std::shared_ptr<NamespaceStore> FileSetCatalog::shared(FileSetId set) const {
  auto it = sets_.find(set.value);
  return it == sets_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<NamespaceStore>> FileSetCatalog::stores() const {
  std::vector<std::shared_ptr<NamespaceStore>> out;
  for (const auto& [id, store] : sets_) out.push_back(store);
  return out;
}

}  // namespace pvfs::mds
