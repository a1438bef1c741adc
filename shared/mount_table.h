// Reading the kernel's mount table (the text of /proc/self/mountinfo): which
// file system holds a path, and whether a mount point already has a mount
// of a type. Pure (the caller reads the file); thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace pvfs {

// The type pvfsmount's mounts have in mountinfo.
inline constexpr std::string_view kPvfsMountType = "fuse.pvfs";

// The file system type ("fuse.pvfs", "ext4") of the mount that holds
// `path` (absolute, without symlinks or "..") according to `mountinfo`:
// the last-mounted entry whose mount point is `path` or a parent of it.
// Empty when no line matches.
std::string mount_type_of(std::string_view mountinfo, std::string_view path);

// Whether `mountinfo` has a mount of `type` whose mount point is exactly
// `mount_point` (absolute, without symlinks or ".."), hidden or not.
bool has_mount_at(std::string_view mountinfo, std::string_view mount_point, std::string_view type);

}  // namespace pvfs
