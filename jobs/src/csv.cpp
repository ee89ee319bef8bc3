#include "lbo/jobs/csv.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lbo/jobs/error.hpp"

namespace lbo::jobs {

int CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string_view CsvTable::field(const CsvRecord& r, int c) const {
  if (c < 0 || static_cast<std::size_t>(c) >= r.fields.size()) return {};
  return r.fields[static_cast<std::size_t>(c)];
}

CsvTable parse_csv(std::string_view text) {
  // A UTF-8 byte order mark (spreadsheets write one) is no part of the first column's name.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<CsvRecord> all;
  CsvRecord record{1, {}};
  std::string field;
  bool quoted = false, any = false;
  std::size_t line = 1, quote_line = 0;
  const auto end_record = [&] {
    record.fields.push_back(std::move(field));
    field.clear();
    const bool blank = record.fields.size() == 1 && record.fields.front().empty();
    if (!blank) all.push_back(std::move(record));
    record = CsvRecord{line, {}};
    any = false;
  };
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
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
      quote_line = line;
    } else if (c == ',') {
      record.fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      end_record();
    } else {
      field += c;
    }
  }
  if (any) end_record();
  CsvTable table;
  if (quoted) table.unclosed_quote_line = quote_line;
  if (all.empty()) return table;
  table.header = std::move(all.front().fields);
  table.records.assign(std::make_move_iterator(all.begin() + 1), std::make_move_iterator(all.end()));
  return table;
}

std::optional<double> parse_number(std::string_view cell) {
  while (!cell.empty() && cell.front() == ' ') cell.remove_prefix(1);
  while (!cell.empty() && cell.back() == ' ') cell.remove_suffix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (cell.empty() || ec != std::errc() || end != cell.data() + cell.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

void CsvProblems::add(std::size_t line, const std::string& what) {
  if (count_++ < 5) lines_ += "\n  " + file_ + ":" + std::to_string(line) + ": " + what;
}

std::string CsvProblems::lines() const {
  return count_ > 5 ? lines_ + "\n  ... and " + std::to_string(count_ - 5) + " more" : lines_;
}

CsvTable read_csv_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string() + ": cannot read it: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot read it: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path.string() + ": cannot read it: " + std::strerror(errno));
  CsvTable table = parse_csv(text.str());
  if (table.unclosed_quote_line > 0) {
    throw InputError(path.string() + ":" + std::to_string(table.unclosed_quote_line) +
                     ": a quote opened here is never closed, so every line after it would be read as one field; "
                     "close the quote (a quote inside a quoted field is written \"\")");
  }
  return table;
}

}  // namespace lbo::jobs
