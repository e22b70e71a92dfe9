// viewer/app/platform.cpp — GLFW and EGL-surfaceless contexts for the ImGui app (platform.h).
//
// The GLFW path uses ImGui's GLFW backend for input. The EGL path has no input at all: it
// sets io.DisplaySize and io.DeltaTime itself and renders into an FBO, which is what a
// screenshot needs. Both hand the frame to ImGui's OpenGL3 backend (GLSL 130).
#include "viewer/app/platform.h"

#include "viewer/app/fonts.h"

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>
#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <stb_image_write.h>
#ifdef GLASS_HAVE_EGL
#include <EGL/egl.h>
#include <EGL/eglext.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/error.h"

namespace glass::viz::app {

struct Window::Impl {
  bool egl = false;
  GLFWwindow* window = nullptr;
#ifdef GLASS_HAVE_EGL
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLContext context = EGL_NO_CONTEXT;
#endif
  GLuint fbo = 0, color = 0;
};

namespace {

#ifdef GLASS_HAVE_EGL
void open_egl(Window::Impl& w, int width, int height);
#endif

std::string& glfw_error() {  // GLFW's last error description, for our messages
  static std::string last;
  return last;
}

}  // namespace

Window::Window(const WindowOptions& o)
    : impl_(std::make_unique<Impl>()), width_(o.width), height_(o.height) {
  GLASS_CHECK(o.width > 0 && o.height > 0, "glass-viewer: window size ", o.width, "x", o.height,
              " must be positive");
  Impl& w = *impl_;
  w.egl = o.egl;
  if (o.egl) {
#ifdef GLASS_HAVE_EGL
    open_egl(w, o.width, o.height);
#else
    GLASS_CHECK(false, "glass-viewer: --egl needs EGL (built without libegl-dev)");
#endif
  } else {
    glfwSetErrorCallback(+[](int, const char* what) { glfw_error() = what; });
    GLASS_CHECK(glfwInit(), "glass-viewer: GLFW could not start (", glfw_error(),
                "). No display? Set DISPLAY, run under xvfb-run, or use --egl for a surfaceless "
                "screenshot");
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
    glfwWindowHint(GLFW_VISIBLE, o.visible ? GLFW_TRUE : GLFW_FALSE);
    w.window = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
    if (!w.window) {
      glfwTerminate();
      GLASS_CHECK(false, "glass-viewer: could not create a ", o.width, "x", o.height,
                  " OpenGL 3 window (", glfw_error(), ")");
    }
    glfwMakeContextCurrent(w.window);
    glfwSwapInterval(o.vsync ? 1 : 0);
  }
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // every start the same: tests and screenshots repeat
  ImGui::StyleColorsDark();
  add_label_font(ImGui::GetIO());  // before the backend builds the font atlas
  if (w.window) ImGui_ImplGlfw_InitForOpenGL(w.window, true);
  ImGui_ImplOpenGL3_Init("#version 130");
}

Window::~Window() {
  Impl& w = *impl_;
  ImGui_ImplOpenGL3_Shutdown();
  if (w.window) ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  if (w.window) {
    glfwDestroyWindow(w.window);
    glfwTerminate();
  }
#ifdef GLASS_HAVE_EGL
  if (w.egl) {
    glDeleteFramebuffers(1, &w.fbo);
    glDeleteRenderbuffers(1, &w.color);
    eglMakeCurrent(w.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(w.display, w.context);
    eglTerminate(w.display);
  }
#endif
}

bool Window::should_close() const { return impl_->window && glfwWindowShouldClose(impl_->window); }

float Window::content_scale() const {
  if (!impl_->window) return 1;
  float x = 1, y = 1;
  glfwGetWindowContentScale(impl_->window, &x, &y);
  return y > 0 ? y : 1;
}

void Window::begin_frame() {
  Impl& w = *impl_;
  if (w.window) {
    glfwPollEvents();
    glfwGetFramebufferSize(w.window, &width_, &height_);
    ImGui_ImplGlfw_NewFrame();
  } else {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(width_), static_cast<float>(height_));
    io.DeltaTime = 1.f / 60;
  }
  ImGui_ImplOpenGL3_NewFrame();
  ImGui::NewFrame();
}

void Window::end_frame() {
  ImGui::Render();
  glViewport(0, 0, width_, height_);
  glClearColor(0.11f, 0.11f, 0.13f, 1);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::present() {
  if (impl_->window)
    glfwSwapBuffers(impl_->window);
  else
    glFinish();
}

std::vector<uint8_t> Window::read_pixels() const {
  std::vector<uint8_t> rgba(static_cast<size_t>(width_) * static_cast<size_t>(height_) * 4);
  if (impl_->window) glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width_, height_, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
  // GL's rows run bottom-up; a PNG's top-down.
  const size_t row = static_cast<size_t>(width_) * 4;
  std::vector<uint8_t> flipped(rgba.size());
  for (int y = 0; y < height_; ++y)
    std::copy_n(
        rgba.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(y)), row,
        flipped.begin() + static_cast<std::ptrdiff_t>(row * static_cast<size_t>(height_ - 1 - y)));
  return flipped;
}

void write_png(const std::string& path, const std::vector<uint8_t>& rgba, int width, int height) {
  GLASS_CHECK(rgba.size() == static_cast<size_t>(width) * static_cast<size_t>(height) * 4,
              "write_png: ", rgba.size(), " bytes is not ", width, "x", height, " RGBA");
  GLASS_CHECK(stbi_write_png(path.c_str(), width, height, 4, rgba.data(), width * 4),
              "write_png: could not write '", path, "'");
}

namespace {

#ifdef GLASS_HAVE_EGL
// Mesa's surfaceless platform: a display with no window system, a context made current
// with no surface (EGL_KHR_surfaceless_context), and an FBO to draw into.
void open_egl(Window::Impl& w, int width, int height) {
  w.display = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  GLASS_CHECK(w.display != EGL_NO_DISPLAY && eglInitialize(w.display, nullptr, nullptr),
              "glass-viewer --egl: no EGL surfaceless platform (Debian: apt install libegl-mesa0)");
  GLASS_CHECK(eglBindAPI(EGL_OPENGL_API), "glass-viewer --egl: EGL cannot bind desktop OpenGL");
  const EGLint config_attribs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0,
                                   EGL_NONE};
  EGLConfig config = nullptr;
  EGLint n = 0;
  GLASS_CHECK(eglChooseConfig(w.display, config_attribs, &config, 1, &n) && n == 1,
              "glass-viewer --egl: no EGL config for desktop OpenGL");
  const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0,
                                    EGL_NONE};
  w.context = eglCreateContext(w.display, config, EGL_NO_CONTEXT, context_attribs);
  GLASS_CHECK(w.context != EGL_NO_CONTEXT,
              "glass-viewer --egl: eglCreateContext failed (EGL error 0x", std::hex, eglGetError(),
              ")");
  GLASS_CHECK(eglMakeCurrent(w.display, EGL_NO_SURFACE, EGL_NO_SURFACE, w.context),
              "glass-viewer --egl: a context without a surface is not supported here");
  glGenRenderbuffers(1, &w.color);
  glBindRenderbuffer(GL_RENDERBUFFER, w.color);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
  glGenFramebuffers(1, &w.fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, w.fbo);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, w.color);
  GLASS_CHECK(glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE,
              "glass-viewer --egl: the framebuffer object is incomplete");
}
#endif

}  // namespace

}  // namespace glass::viz::app
