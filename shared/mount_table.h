// Reading the kernel's mount table (the text of /proc/self/mountinfo): which
// file system holds a path, and whether a mount point already has a mount
// of a type. Pure (the caller reads the file); thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

// The mount points, in mount order, of the mounts of `type` whose source
// (the fsname: pvfsmount's default is "pvfs:MDS-ADDRESS") is `source`.
std::vector<std::string> mount_points_of(std::string_view mountinfo, std::string_view type,
                                         std::string_view source);

}  // namespace pvfs
