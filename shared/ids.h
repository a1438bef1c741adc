// Strong identifier types. An InodeId carries its file set in the top 16
// bits so any inode can be routed to its owning MDS without a lookup table.
// Plain values; thread-safe.
#pragma once

#include <compare>
#include <cstdint>

namespace pvfs {

template <typename Tag, typename Rep>
struct StrongId {
  Rep value{};
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : value(v) {}
  constexpr auto operator<=>(const StrongId&) const = default;
};

using ServerId = StrongId<struct ServerIdTag, uint32_t>;
using MdsId = StrongId<struct MdsIdTag, uint32_t>;
using FileSetId = StrongId<struct FileSetIdTag, uint16_t>;

// 64-bit inode number: [file set : 16][local number : 48].
// The root directory of the whole namespace is inode 1 (file set 0), which is
// also FUSE's root inode number, so no translation is needed at the bridge.
struct InodeId : StrongId<struct InodeIdTag, uint64_t> {
  using StrongId::StrongId;
  static constexpr int kLocalBits = 48;
  static constexpr uint64_t kLocalMask = (uint64_t{1} << kLocalBits) - 1;

  static constexpr InodeId make(FileSetId set, uint64_t local) {
    return InodeId((uint64_t{set.value} << kLocalBits) | (local & kLocalMask));
  }
  constexpr FileSetId fileset() const { return FileSetId(static_cast<uint16_t>(value >> kLocalBits)); }
  constexpr uint64_t local() const { return value & kLocalMask; }
};

inline constexpr InodeId kRootInode{1};

// One object of a striped file: stripe i lives in object i mod stripe count.
struct ObjectId {
  InodeId ino;
  uint32_t index = 0;
  constexpr auto operator<=>(const ObjectId&) const = default;
};

}  // namespace pvfs
