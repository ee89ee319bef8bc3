#include "csv_table.hpp"

#include <fstream>
#include <sstream>

#include "lbo/orchestrator/files.hpp"

namespace lbo::report {

namespace {

// The fields of every record of `text`, quotes undone.
std::vector<std::vector<std::string>> records(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      field.clear();
      out.push_back(std::move(record));
      record.clear();
      any = false;
    } else {
      field += c;
    }
  }
  if (any) {
    record.push_back(std::move(field));
    out.push_back(std::move(record));
  }
  return out;
}

}  // namespace

std::vector<CsvRow> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> all = records(text);
  std::vector<CsvRow> rows;
  if (all.empty()) return rows;
  const std::vector<std::string>& header = all.front();
  for (std::size_t r = 1; r < all.size(); ++r) {
    CsvRow row;
    for (std::size_t c = 0; c < header.size() && c < all[r].size(); ++c) row.emplace(header[c], std::move(all[r][c]));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<std::vector<CsvRow>> read_csv_file(const std::filesystem::path& path) {
  if (!orchestrator::not_a_regular_file(path).empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return parse_csv(text.str());
}

}  // namespace lbo::report
