#include "reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "lbo/jobs/job_spec.hpp"

namespace fs = std::filesystem;

namespace lbo::jobs::job_file {

namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

}  // namespace

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string join_quoted(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + in_quotes(item);
  return out;
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  std::string s = out.str();
  if (std::isfinite(v) && s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

bool is_executable_file(const fs::path& file) {
  std::error_code ec;
  return fs::is_regular_file(file, ec) && ::access(file.c_str(), X_OK) == 0;
}

std::optional<fs::path> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (is_executable_file(candidate)) return candidate;
  }
  return std::nullopt;
}

Reader::Reader(const fs::path& path, std::string_view text) : path_(path), text_(text) {
  std::error_code ec;
  base_dir_ = fs::absolute(path, ec).parent_path();
}

std::string Reader::place(const toml::source_region& where, std::string_view key) const {
  std::string location = path_.string();
  if (where.begin.line > 0) location += ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column);
  return location + ": " + std::string(key);
}

void Reader::error(const toml::source_region& where, std::string_view key, std::string_view what) {
  errors_.push_back(place(where, key) + ": " + std::string(what));
}

std::string Reader::key_path(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
}

void Reader::check_keys(const toml::table& table, std::string_view prefix, std::initializer_list<std::string_view> allowed) {
  for (auto&& [key, node] : table) {
    const std::string_view name = key.str();
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
    std::string message = "unknown key";
    std::string_view closest;
    std::size_t best = 3;  // suggest only near misses
    for (std::string_view candidate : allowed) {
      const std::size_t d = edit_distance(name, candidate);
      if (d < best) best = d, closest = candidate;
    }
    if (!closest.empty()) {
      message += "; did you mean \"" + std::string(closest) + "\"?";
    } else {
      message += "; allowed here: ";
      for (std::string_view candidate : allowed) message += (candidate == *allowed.begin() ? "" : ", ") + std::string(candidate);
    }
    error(key.source(), key_path(prefix, name), message);
  }
}

const toml::table* Reader::optional_table(const toml::table& parent, std::string_view key, std::string_view prefix) {
  const toml::node* node = parent.get(key);
  if (node == nullptr) return nullptr;
  if (!node->is_table()) {
    error(*node, key_path(prefix, key), "must be a table, not " + std::string(type_name(*node)));
    return nullptr;
  }
  return node->as_table();
}

const toml::table* Reader::require_table(const toml::table& parent, std::string_view key, std::string_view prefix) {
  if (parent.get(key) == nullptr) {
    error(parent.source(), key_path(prefix, key), "missing; add a [" + std::string(key) + "] table");
    return nullptr;
  }
  return optional_table(parent, key, prefix);
}

std::optional<int> Reader::get_int_in(const toml::table& t, std::string_view key, std::string_view prefix, bool required,
                                      std::int64_t low, std::int64_t high, std::string_view rule) {
  const auto value = get_int(t, key, prefix, required);
  if (!value) return std::nullopt;
  if (*value < low || *value > high) {
    error(*t.get(key), key_path(prefix, key), std::string(rule) + " (got " + std::to_string(*value) + ")");
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

std::optional<double> Reader::get_seconds(const toml::table& t, std::string_view key, std::string_view prefix, Bound zero,
                                          std::string_view hint) {
  const auto value = get_number(t, key, prefix, false);
  if (!value) return std::nullopt;
  const bool above_zero = zero == Bound::inclusive ? *value >= 0 : *value > 0;
  if (!above_zero || !(*value <= kMaxSeconds)) {
    error(*t.get(key), key_path(prefix, key),
          std::string(zero == Bound::inclusive ? "must be a number of seconds between 0 and 1e9"
                                               : "must be a number of seconds > 0 and <= 1e9") +
              " (got " + format_number(*value) + ")" + std::string(hint));
    return std::nullopt;
  }
  return value;
}

bool Reader::positive(const toml::table& t, std::string_view prefix, std::string_view key, double& out) {
  const auto value = get_number(t, key, prefix, false);
  if (!value) return false;
  if (!(*value > 0) || !std::isfinite(*value)) {
    error(*t.get(key), key_path(prefix, key), "must be a number > 0");
    return false;
  }
  out = *value;
  return true;
}

fs::path Reader::resolve(const std::string& path) const {
  fs::path p(path);
  return (p.is_absolute() ? p : base_dir_ / p).lexically_normal();
}

}  // namespace lbo::jobs::job_file
