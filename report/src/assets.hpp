#pragma once
// The report's page template, script and chart library, compiled into lbo (assets.cpp), so an
// lbo binary needs no data files to write a report.

#include <string>
#include <string_view>

namespace lbo::report::assets {

std::string_view page_template();  ///< assets/report.html
std::string_view report_script();  ///< assets/report.js
std::string_view echarts();        ///< assets/vendor/echarts/echarts.min.js
std::string_view echarts_version();  ///< assets/vendor/echarts/VERSION, first line
std::string_view compare_template();  ///< assets/compare.html
std::string_view compare_script();    ///< assets/compare.js

/// Text inlined into a <script> element must not close it: "</" becomes "<\/", which means the
/// same inside a JavaScript string, regular expression or JSON string (the only places it can
/// occur).
std::string script_safe(std::string_view text);

}  // namespace lbo::report::assets
