#include "lbo/report/html.hpp"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "assets.hpp"
#include "lbo/orchestrator/files.hpp"
#include "lbo/orchestrator/version.hpp"
#include "lbo/report/run_data.hpp"
#include "transfer.hpp"

namespace lbo::report {

namespace {

void fill(std::string& page, std::string_view placeholder, const std::string& text) {
  const std::size_t at = page.find(placeholder);
  if (at == std::string::npos || page.find(placeholder, at + 1) != std::string::npos) {
    throw std::logic_error("report template: " + std::string(placeholder) + " must occur exactly once");
  }
  page.replace(at, placeholder.size(), text);
}

}  // namespace

std::string report_html(const std::vector<std::filesystem::path>& dirs, std::optional<int> ended_with) {
  nlohmann::json doc;
  doc["generated"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  doc["generator"] = std::string(orchestrator::lbo_version());
  doc["chart_library"] = "Apache ECharts " + std::string(assets::echarts_version());
  doc["runs"] = nlohmann::json::array();
  for (std::size_t i = 0; i < dirs.size(); ++i) doc["runs"].push_back(run_data(dirs[i], i == 0 ? ended_with : std::nullopt));
  doc["transfer"] = transfer_json(doc["runs"]);
  // Failure reasons quote the objective's stderr, which need not be UTF-8.
  const std::string data = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);

  std::string page(assets::page_template());
  // The data last: its text must not be searched for the other placeholders.
  fill(page, "/*@ECHARTS@*/", assets::script_safe(assets::echarts()));
  fill(page, "/*@REPORT_JS@*/", assets::script_safe(assets::report_script()));
  fill(page, "/*@DATA@*/", assets::json_safe(data));
  return page;
}

void write_report(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                  std::optional<int> ended_with) {
  orchestrator::write_file_atomically(out, report_html(dirs, ended_with), orchestrator::Durability::cached);
}

}  // namespace lbo::report
