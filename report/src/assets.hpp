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
/// JSON text inlined into a <script> element as a JavaScript literal, so that no value can change
/// how the page parses: every '<', '>' and '&' (which occur only inside its strings) becomes its
/// \u escape, so no "</script", "<!--" or "<script" is left to end the element or to make the
/// parser look for a second "</script>"; U+2028 and U+2029 become escapes too (a line break
/// inside a string literal to older JavaScript). The same string to JSON.parse and to JavaScript.
std::string json_safe(std::string_view json);

}  // namespace lbo::report::assets
