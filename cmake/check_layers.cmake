# The layers of the code and which others each may include (the link graph of CMakeLists.txt, one way only). Run at
# build time (`cmake -DSOURCE_DIR=... -DSTAMP=... -P check_layers.cmake`): a wrong-way include, say core/ including
# io/ or the estimators including the CLI, fails the build with the file and line, before anything links.
#
#   core         nothing (units, enums, the typed model / device / workload, assumptions)
#   estimators   core
#   tco          core
#   serve        core estimators tco
#   io           core estimators serve                  (loaders produce the types the layers above consume)
#   cuda         core                                   (the plugin: no estimator, no loader)
#   calibrate    core estimators io cuda
#   recommend    core estimators io tco serve
#   report       core estimators io tco serve recommend
#   validate     core estimators io serve recommend     (no CLI: cases resolved by recommend's resolve_query, prepare_serve)
#   cli          every layer above
#   api          cli and every layer below it
#   python       api, cli, core, io (the module is a thin front end)
# tools/, tests/, bench/ and fuzz/ are outside the layers.

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

set(layers core estimators tco serve io cuda calibrate recommend report validate cli api python)
set(allowed_core "")
set(allowed_estimators core)
set(allowed_tco core)
set(allowed_serve core estimators tco)
set(allowed_io core estimators serve)
set(allowed_cuda core)
set(allowed_calibrate core estimators io cuda)
set(allowed_recommend core estimators io tco serve)
set(allowed_report core estimators io tco serve recommend)
set(allowed_validate core estimators io serve recommend)
set(allowed_cli core estimators tco serve io cuda calibrate recommend report validate)
set(allowed_api core estimators tco serve io cuda calibrate recommend report validate cli)
set(allowed_python api cli core io)

set(errors "")
foreach(layer IN LISTS layers)
  if(layer STREQUAL "estimators")
    set(dir "${SOURCE_DIR}/estimators")
  elseif(layer STREQUAL "python")
    set(dir "${SOURCE_DIR}/python")
  else()
    set(dir "${SOURCE_DIR}/src/${layer}")
  endif()
  if(NOT IS_DIRECTORY "${dir}")
    continue()
  endif()
  # Sources directly in the layer's directory and below (python/tests are Python files and are not matched).
  file(GLOB_RECURSE files "${dir}/*.hpp" "${dir}/*.cpp" "${dir}/*.cu" "${dir}/*.cuh" "${dir}/*.h")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
    # Line numbers: file(STRINGS) drops them, so each include is found again in the numbered text.
    if(NOT lines)
      continue()
    endif()
    file(READ "${file}" text)
    string(REPLACE ";" "\\;" text "${text}")
    string(REPLACE "\n" ";" text_lines "${text}")
    set(number 0)
    foreach(line IN LISTS text_lines)
      math(EXPR number "${number} + 1")
      if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([a-z_]+)/")
        continue()
      endif()
      set(target "${CMAKE_MATCH_1}")
      if(target STREQUAL layer)
        continue()
      endif()
      list(FIND layers "${target}" known)
      if(known EQUAL -1)
        continue()  # not a layer of this project (a system or third-party header spelled with quotes)
      endif()
      list(FIND allowed_${layer} "${target}" ok)
      if(ok EQUAL -1)
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${file}")
        string(REPLACE ";" " " may "${allowed_${layer}}")
        if(may STREQUAL "")
          set(may "nothing")
        endif()
        string(APPEND errors "${rel}:${number}: the ${layer} layer includes ${target}/ (it may include: ${may})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(errors)
  message(FATAL_ERROR "wrong-way includes (cmake/check_layers.cmake lists the layers):\n${errors}")
endif()
if(STAMP)
  file(WRITE "${STAMP}" "layers checked\n")
endif()
