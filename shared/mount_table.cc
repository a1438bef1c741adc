#include "shared/mount_table.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace pvfs {

namespace {

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() &&
        text.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

// Calls `each(mount_point, type, source)` for every well-formed line, in order.
void for_each_mount(std::string_view mountinfo,
                    const std::function<void(const std::string&, std::string_view, std::string_view)>& each) {
  std::string_view rest = mountinfo;
  while (!rest.empty()) {
    const size_t eol = std::min(rest.find('\n'), rest.size());
    std::string_view line = rest.substr(0, eol);
    rest = rest.substr(std::min(eol + 1, rest.size()));
    // id parent major:minor root mount-point options [optional...] - type source super-options
    std::vector<std::string_view> fields;
    for (size_t start = 0; start < line.size();) {
      size_t end = std::min(line.find(' ', start), line.size());
      fields.push_back(line.substr(start, end - start));
      start = end + 1;
    }
    auto dash = std::find(fields.begin() + std::min<size_t>(6, fields.size()), fields.end(),
                          std::string_view("-"));
    if (fields.size() < 5 || dash == fields.end() || dash + 1 == fields.end()) continue;
    each(unescape(fields[4]), *(dash + 1), dash + 2 == fields.end() ? std::string_view() : *(dash + 2));
  }
}

}  // namespace

std::string mount_type_of(std::string_view mountinfo, std::string_view path) {
  const auto covers = [&](std::string_view mount_point) {
    if (mount_point == "/") return true;
    return path.substr(0, mount_point.size()) == mount_point &&
           (path.size() == mount_point.size() || path[mount_point.size()] == '/');
  };
  std::string type;
  size_t best = 0;
  for_each_mount(mountinfo, [&](const std::string& mount_point, std::string_view t, std::string_view) {
    // Later lines are mounted later: on a tie they hide the earlier ones.
    if (covers(mount_point) && mount_point.size() >= best) {
      best = mount_point.size();
      type = std::string(t);
    }
  });
  return type;
}

bool has_mount_at(std::string_view mountinfo, std::string_view mount_point, std::string_view type) {
  bool found = false;
  for_each_mount(mountinfo, [&](const std::string& point, std::string_view t, std::string_view) {
    found = found || (point == mount_point && t == type);
  });
  return found;
}

std::vector<std::string> mount_points_of(std::string_view mountinfo, std::string_view type,
                                         std::string_view source) {
  std::vector<std::string> points;
  for_each_mount(mountinfo, [&](const std::string& point, std::string_view t, std::string_view src) {
    if (t == type && unescape(src) == source) points.push_back(point);
  });
  return points;
}

}  // namespace pvfs
