#pragma once
// The report's page template, script and chart library, compiled into lbo (assets.cpp), so an
// lbo binary needs no data files to write a report.

#include <string_view>

namespace lbo::report::assets {

std::string_view page_template();  ///< assets/report.html
std::string_view report_script();  ///< assets/report.js
std::string_view echarts();        ///< assets/vendor/echarts/echarts.min.js
std::string_view echarts_version();  ///< assets/vendor/echarts/VERSION, first line

}  // namespace lbo::report::assets
