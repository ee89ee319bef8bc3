#include "csv_table.hpp"

#include <fstream>
#include <sstream>

#include "lbo/jobs/csv.hpp"
#include "lbo/orchestrator/files.hpp"

namespace lbo::report {

std::vector<CsvRow> parse_csv(std::string_view text) {
  jobs::CsvTable table = jobs::parse_csv(text);
  std::vector<CsvRow> rows;
  for (jobs::CsvRecord& record : table.records) {
    CsvRow row;
    for (std::size_t c = 0; c < table.header.size() && c < record.fields.size(); ++c) {
      row.emplace(table.header[c], std::move(record.fields[c]));
    }
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
