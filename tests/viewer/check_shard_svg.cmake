# tests/viewer/check_shard_svg.cmake — what glass-dot --shard drew: both rungs' plots, a
# curve per rank in each, the phases, the arithmetic's dashed lines, the gathers and frees
# marked, and every parameter's bar.
# Run as: cmake -DSVG=file.svg -P check_shard_svg.cmake
file(READ "${SVG}" svg)
foreach(expected
        "<svg xmlns=\"http://www.w3.org/2000/svg\""
        "class=\"rung DDP\"" "class=\"rung FSDP\""
        "<polyline class=\"rank0\"" "<polyline class=\"rank1\""
        "class=\"phase forward\"" "class=\"phase backward\"" "class=\"phase step\""
        "class=\"arithmetic\"" "16Ψ/N = "
        "<polygon class=\"jump up rank0\"" "<polygon class=\"jump down rank1\""
        "fc1.weight [512, 256]" "fc3.bias [128]"
        "rank 1 owns rows [256, 512)" "</svg>")
  string(FIND "${svg}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SVG} lacks '${expected}'")
  endif()
endforeach()
