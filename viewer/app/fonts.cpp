// viewer/app/fonts.cpp — loading the label font into ImGui's atlas (fonts.h).
#include "viewer/app/fonts.h"

#include <cstdio>
#include <filesystem>
#include <string_view>

namespace glass::viz::app {

namespace {
// Baked large, drawn smaller: ImGui scales glyphs from the baked size, and downscaling
// stays sharp where upscaling would blur.
constexpr float kBakedPixels = 24;
constexpr const char* kLabelFontName = "glass-label-font";
}  // namespace

bool add_label_font(ImGuiIO& io, const char* file) {
  if (io.Fonts->Fonts.empty()) io.Fonts->AddFontDefault();  // the first font is the UI's
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return false;
  ImFontConfig config;
  config.OversampleH = 2;
  std::snprintf(config.Name, sizeof config.Name, "%s", kLabelFontName);
  return io.Fonts->AddFontFromFileTTF(file, kBakedPixels, &config) != nullptr;
}

ImFont* label_font() {
  for (ImFont* f : ImGui::GetIO().Fonts->Fonts)
    if (f->ConfigData != nullptr && std::string_view(f->ConfigData->Name) == kLabelFontName)
      return f;
  return ImGui::GetFont();
}

}  // namespace glass::viz::app
