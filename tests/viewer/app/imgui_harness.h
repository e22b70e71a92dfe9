// tests/viewer/app/imgui_harness.h — a bare Dear ImGui context for the panel tests: no
// window, no GL, no platform backend. The display size, font atlas and mouse are set by
// hand, NewFrame/Render run, and the test reads what the panels recorded in App.
#pragma once

#include <imgui.h>

#include "viewer/app/app.h"
#include "viewer/app/fonts.h"

namespace glass::viz::app {

// One ImGui context for a test, with a built font atlas (with the label font, as the app
// loads it, unless `label_font_file` is null) and a 1400x900 display.
struct ImGuiHarness {
  explicit ImGuiHarness(const char* label_font_file = kLabelFontFile) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    if (label_font_file != nullptr) label_font_loaded = add_label_font(io, label_font_file);
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1400, 900);
    io.DeltaTime = 1.f / 60;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~ImGuiHarness() { ImGui::DestroyContext(); }
  bool label_font_loaded = false;
  // One frame with the mouse at (x, y), the left button down or up.
  void frame(App& app, float x = -1, float y = -1, bool down = false) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    io.MouseDown[0] = down;
    ImGui::NewFrame();
    app.frame();
    ImGui::Render();
  }
  // One frame of other input: the mouse at (x, y), a wheel turn, Ctrl or Shift held, one
  // key down (ImGui 1.86: a backend key code; GLFW's for '=' is '='), all let go after.
  struct Input {
    float x = -1, y = -1, wheel = 0;
    bool ctrl = false, shift = false;
    int key = -1;
  };
  void input(App& app, const Input& in) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(in.x, in.y);
    io.MouseWheel = in.wheel;
    io.KeyCtrl = in.ctrl;
    io.KeyShift = in.shift;
    if (in.key >= 0) io.KeysDown[in.key] = true;
    ImGui::NewFrame();
    app.frame();
    ImGui::Render();
    io.MouseWheel = 0;
    io.KeyCtrl = io.KeyShift = false;
    if (in.key >= 0) io.KeysDown[in.key] = false;
    frame(app);  // with the key up, so that the next press is a new one
  }
  void stride_only(App& app, float x = -1, float y = -1) {
    ImGuiIO& io = ImGui::GetIO();
    io.MousePos = ImVec2(x, y);
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(io.DisplaySize);
    app.stride_panel();
    ImGui::Render();
  }
};

}  // namespace glass::viz::app
