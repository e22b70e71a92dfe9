# lessons/figures.cmake — the lessons' figures, drawn by glass-dot from the code.
#
# Each README shows the graphs of its own models, and lesson 02 its stride pictures (a
# view's elements above the storage cells they live in), as SVGs under <lesson>/figures/. They are
# produced by the glass-dot tool (viewer/tools/glass_dot.cpp) running the same demo code,
# so a picture cannot drift from the code it shows:
#   cmake -DGLASS_DOT=<glass-dot> -DSOURCE_DIR=<lessons dir> -DOUT_DIR=<dir> -P figures.cmake
# writes every figure into OUT_DIR/<lesson>/figures/; the `lesson_figures` target runs it
# with OUT_DIR = the source tree (regenerate), the `lesson_figures_current` test with a
# scratch dir, then compares byte for byte with the committed files.
# --no-grad: no gradient colours, whose last digits could differ on a CPU with other vector
# widths (the figures must be byte-identical wherever the test runs).
set(GLASS_LESSON_FIGURES
    "01_imperative_model if_else --forward"
    "01_imperative_model loop"
    "01_imperative_model if_else"
    "03_broadcasting broadcast"
    "04_autograd tanh_mlp --saved"
    "05_custom_functions myrelu"
    "06_training mlp --collapse")
# Stride pictures: "<lesson> <figure name> <glass-dot arguments>", over lesson 02's
# x = arange(12).view({3, 4}) (views written as code; no spaces inside a recipe).
set(GLASS_STRIDE_FIGURES
    "02_storage_and_strides x --tensor 3,4 --highlight 1,2"
    "02_storage_and_strides transpose --tensor 3,4 --view t() --highlight 1,2"
    "02_storage_and_strides slice_step --tensor 3,4 --view slice(1,1,4,2) --highlight 2,1"
    "02_storage_and_strides expand --tensor 3,4 --view unsqueeze(0).expand({2,3,4}) --highlight 1,2,3"
    "02_storage_and_strides row_and_column --tensor 3,4 --view select(0,1) --view select(1,2)")

# Graph figures become "<lesson> <name> --demo <demo> <flags> --no-grad", named after the
# demo and its flags; both lists are then drawn the same way.
set(GLASS_FIGURES ${GLASS_STRIDE_FIGURES})
foreach(entry IN LISTS GLASS_LESSON_FIGURES)
  separate_arguments(parts UNIX_COMMAND "${entry}")
  list(POP_FRONT parts lesson demo)
  set(name ${demo})
  if(parts)
    string(REPLACE "--" "" suffix "${parts}")
    string(REPLACE ";" "_" suffix "${suffix}")  # several flags: if_else_forward_saved
    set(name "${demo}_${suffix}")
  endif()
  string(REPLACE ";" " " flags "${parts}")
  list(APPEND GLASS_FIGURES "${lesson} ${name} --demo ${demo} ${flags} --no-grad")
endforeach()

foreach(entry IN LISTS GLASS_FIGURES)
  separate_arguments(parts UNIX_COMMAND "${entry}")
  list(POP_FRONT parts lesson name)
  set(out "${OUT_DIR}/${lesson}/figures/${name}.svg")
  get_filename_component(dir "${out}" DIRECTORY)
  file(MAKE_DIRECTORY "${dir}")
  execute_process(COMMAND "${GLASS_DOT}" ${parts} --format svg --out "${out}"
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "glass-dot ${parts} failed (${rc})")
  endif()
  if(COMPARE_WITH)
    set(committed "${COMPARE_WITH}/${lesson}/figures/${name}.svg")
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${out}" "${committed}"
                    RESULT_VARIABLE differ)
    if(NOT differ EQUAL 0)
      message(FATAL_ERROR "${committed} is not what glass-dot draws now; rebuild the "
                          "figures with `cmake --build build --target lesson_figures`")
    endif()
  endif()
endforeach()
