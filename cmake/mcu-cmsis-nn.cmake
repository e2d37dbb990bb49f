# CMSIS-NN at the commit mcu-mlir is tested with, fetched with FetchContent into a cache shared by
# every build (<cache>/<commit>), once: a second build finds the checkout there and fetches nothing.
#
#   include(mcu-cmsis-nn.cmake)
#   mcu_cmsis_nn_fetch(path error)     # path: the checkout, or error: why there is none
#
# As a script (mcu_mlir.firmware.cmsis_nn runs it before emitting C, so a compile can fall back to the
# portable kernels), it prints "mcu-cmsis-nn: fetched|cached DIR" or fails with the error:
#   cmake [-DMCU_CMSIS_NN_GIT_URL=URL] [-DMCU_CMSIS_NN_COMMIT=SHA] [-DMCU_CMSIS_NN_CACHE=DIR] -P mcu-cmsis-nn.cmake
#
# Each setting is the -D / cache variable, else the environment variable of the same name, else:
#   MCU_CMSIS_NN_GIT_URL  the pinned URL below (a mirror, file:// too, for machines without GitHub)
#   MCU_CMSIS_NN_COMMIT   the pinned commit below (a full 40-digit hash)
#   MCU_CMSIS_NN_CACHE    $MCU_MLIR_CACHE_DIR, else $XDG_CACHE_HOME/mcu-mlir, else ~/.cache/mcu-mlir; + /cmsis-nn
# An error starts with "unreachable:" when the URL cannot be reached (offline), "commit:" when what it
# holds is not the commit asked for.
include_guard(GLOBAL)

set(MCU_CMSIS_NN_PINNED_COMMIT "99f736a63036613032f9b70de36b493bcd7802d4")
set(MCU_CMSIS_NN_PINNED_URL "https://github.com/ARM-software/CMSIS-NN.git")
set(_MCU_CMSIS_NN_MODULE "${CMAKE_CURRENT_LIST_FILE}")

# name: the -D / cache value, else $ENV{name}, else `default`.
function(_mcu_cmsis_nn_setting name default)
  if(NOT "${${name}}" STREQUAL "")
    set(value "${${name}}")
  elseif(NOT "$ENV{${name}}" STREQUAL "")
    set(value "$ENV{${name}}")
  else()
    set(value "${default}")
  endif()
  set(${name} "${value}" PARENT_SCOPE)
endfunction()

function(_mcu_cmsis_nn_head dir out_var)
  execute_process(COMMAND git -C "${dir}" rev-parse HEAD RESULT_VARIABLE rc OUTPUT_VARIABLE head
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    set(head "no git checkout")
  endif()
  set(${out_var} "${head}" PARENT_SCOPE)
endfunction()

function(mcu_cmsis_nn_fetch path_var error_var)
  if(DEFINED ENV{MCU_MLIR_CACHE_DIR} AND NOT "$ENV{MCU_MLIR_CACHE_DIR}" STREQUAL "")
    set(base "$ENV{MCU_MLIR_CACHE_DIR}")
  elseif(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(base "$ENV{XDG_CACHE_HOME}/mcu-mlir")
  else()
    set(base "$ENV{HOME}/.cache/mcu-mlir")
  endif()
  _mcu_cmsis_nn_setting(MCU_CMSIS_NN_GIT_URL "${MCU_CMSIS_NN_PINNED_URL}")
  _mcu_cmsis_nn_setting(MCU_CMSIS_NN_COMMIT "${MCU_CMSIS_NN_PINNED_COMMIT}")
  _mcu_cmsis_nn_setting(MCU_CMSIS_NN_CACHE "${base}/cmsis-nn")
  set(url "${MCU_CMSIS_NN_GIT_URL}")
  set(commit "${MCU_CMSIS_NN_COMMIT}")
  set(${path_var} "" PARENT_SCOPE)
  set(${error_var} "" PARENT_SCOPE)
  string(LENGTH "${commit}" length)
  if(NOT commit MATCHES "^[0-9a-f]+$" OR NOT length EQUAL 40)
    set(${error_var} "commit: MCU_CMSIS_NN_COMMIT='${commit}' is not a full 40-digit commit hash" PARENT_SCOPE)
    return()
  endif()
  find_program(MCU_GIT git)
  if(NOT MCU_GIT)
    set(${error_var} "unreachable: git is not installed, so CMSIS-NN cannot be fetched from ${url}" PARENT_SCOPE)
    return()
  endif()
  set(dir "${MCU_CMSIS_NN_CACHE}/${commit}")
  file(MAKE_DIRECTORY "${MCU_CMSIS_NN_CACHE}")
  file(LOCK "${dir}.lock" GUARD FUNCTION TIMEOUT 1800)  # another build may be fetching the same commit
  set(how cached)
  if(NOT EXISTS "${dir}/Include/arm_nnfunctions.h")
    set(how fetched)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E env GIT_TERMINAL_PROMPT=0 "${MCU_GIT}" ls-remote "${url}" HEAD
                    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE why ERROR_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      string(REGEX REPLACE "\n.*" "" why "${why}")   # git's first line says it
      set(${error_var} "unreachable: cannot reach ${url} (${why})" PARENT_SCOPE)
      return()
    endif()
    file(REMOVE_RECURSE "${dir}.partial" "${dir}.work")
    execute_process(COMMAND "${CMAKE_COMMAND}" "-DMCU_CMSIS_NN_POPULATE=${dir}.partial" "-DMCU_CMSIS_NN_WORK=${dir}.work"
                            "-DMCU_CMSIS_NN_GIT_URL=${url}"
                            "-DMCU_CMSIS_NN_COMMIT=${commit}" -P "${_MCU_CMSIS_NN_MODULE}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    file(REMOVE_RECURSE "${dir}.work")
    if(NOT rc EQUAL 0)
      file(REMOVE_RECURSE "${dir}.partial")
      if(log MATCHES "Failed to checkout tag")
        set(${error_var} "commit: ${url} holds no commit ${commit}" PARENT_SCOPE)
      else()
        string(REGEX REPLACE "\n+" " " log "${log}")
        set(${error_var} "unreachable: fetching CMSIS-NN from ${url} failed: ${log}" PARENT_SCOPE)
      endif()
      return()
    endif()
    _mcu_cmsis_nn_head("${dir}.partial" head)
    if(NOT head STREQUAL commit)
      file(REMOVE_RECURSE "${dir}.partial")
      set(${error_var} "commit: CMSIS-NN from ${url} checked out at ${head}, not the pinned ${commit}" PARENT_SCOPE)
      return()
    endif()
    file(RENAME "${dir}.partial" "${dir}")
  endif()
  _mcu_cmsis_nn_head("${dir}" head)   # what gets built is the commit asked for, fetched now or before
  if(NOT head STREQUAL commit)
    set(${error_var} "commit: the cached CMSIS-NN in ${dir} is at ${head}, not ${commit} (delete that folder)"
        PARENT_SCOPE)
    return()
  endif()
  set(${path_var} "${dir}" PARENT_SCOPE)
  set(MCU_CMSIS_NN_COMMIT "${commit}" PARENT_SCOPE)   # what the caller may report
  set(MCU_CMSIS_NN_HOW "${how}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(MCU_CMSIS_NN_POPULATE)
    # The fetch itself, in a process of its own: a failed FetchContent ends the process it runs in.
    include(FetchContent)
    FetchContent_Populate(mcu_cmsis_nn QUIET GIT_REPOSITORY "${MCU_CMSIS_NN_GIT_URL}" GIT_TAG "${MCU_CMSIS_NN_COMMIT}"
                          GIT_PROGRESS OFF SOURCE_DIR "${MCU_CMSIS_NN_POPULATE}"
                          SUBBUILD_DIR "${MCU_CMSIS_NN_WORK}/sub" BINARY_DIR "${MCU_CMSIS_NN_WORK}/bin")
  else()
    mcu_cmsis_nn_fetch(path error)
    if(error)
      message(NOTICE "mcu-cmsis-nn-error: ${error}")   # one line, as the caller reads it
      message(FATAL_ERROR "CMSIS-NN is not there")
    endif()
    message("mcu-cmsis-nn: ${MCU_CMSIS_NN_HOW} ${path}")
  endif()
endif()
