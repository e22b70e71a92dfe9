// viewer/app/platform.h — a GL context and an ImGui platform for glass-viewer.
//
// Two ways to get pixels: a GLFW window (needs an X server: a desktop, or Xvfb in CI) or
// EGL on Mesa's surfaceless platform (EGL_PLATFORM_SURFACELESS_MESA: no server, no
// window, no pbuffer; the frame is drawn into a framebuffer object). Either way the
// OpenGL3 ImGui backend renders, and read_pixels() returns the last frame, top row first.
// Invariant: one Window at a time owns the ImGui context it created; its destructor
// tears down the backends, the context and the GL context, in that order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace glass::viz::app {

struct WindowOptions {
  int width = 1400, height = 900;
  std::string title = "glass-viewer";
  bool egl = false;     // surfaceless EGL + FBO instead of a GLFW window
  bool visible = true;  // GLFW: show the window (screenshots hide it)
  bool vsync = true;    // GLFW: wait for the display (off for the bench)
};

class Window {
 public:
  // Creates the GL context and the ImGui context with its backends; a glass::Error says
  // what was missing (no display, no EGL surfaceless platform).
  explicit Window(const WindowOptions& options);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool should_close() const;
  void begin_frame();  // polls events, ImGui NewFrame
  void end_frame();    // ImGui Render, draws, and (GLFW) does not swap yet
  void present();      // GLFW: swap buffers; EGL: glFinish
  // RGBA8 of the frame just rendered (call between end_frame and present), top row first.
  std::vector<uint8_t> read_pixels() const;
  // The monitor's content scale (GLFW: 2 on a 200% display; EGL: 1): node labels scale by it.
  float content_scale() const;
  int width() const { return width_; }
  int height() const { return height_; }

  struct Impl;  // GLFW or EGL state (platform.cpp)

 private:
  std::unique_ptr<Impl> impl_;
  int width_ = 0, height_ = 0;
};

// Writes RGBA8 pixels (top row first) as a PNG; a glass::Error when the file cannot be written.
void write_png(const std::string& path, const std::vector<uint8_t>& rgba, int width, int height);

}  // namespace glass::viz::app
