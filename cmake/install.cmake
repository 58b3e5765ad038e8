# `cmake --install <build> --prefix P`: the CLI in P/bin, the libraries and their
# CMake package (find_package(ispsim), targets ispsim::<library without the
# ispsim_ prefix>) in P/lib, the headers in P/include/ispsim (included as in the
# source tree: "models/nand/die.h"), the data files in P/share/ispsim (found by
# common/data_dir.h relative to bin/) and the Python package in
# P/lib/python3.X/dist-packages/ispsim.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(ISPSIM_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/ispsim)
set(ISPSIM_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/ispsim)
set(ISPSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ispsim)
# The folders whose libraries and headers are installed (not tests, bench, fuzz).
set(ISPSIM_INSTALLED_AREAS common traces kernels schema models platforms tools/ispsim/sweep)

# Every static library defined under `dir`, recursively.
function(ispsim_libraries_under dir out)
  set(found)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND found ${t})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    ispsim_libraries_under(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

set(ISPSIM_LIBRARIES)
foreach(area ${ISPSIM_INSTALLED_AREAS})
  ispsim_libraries_under(${PROJECT_SOURCE_DIR}/${area} libs)
  list(APPEND ISPSIM_LIBRARIES ${libs})
endforeach()

# The libraries name the source and build trees as include directories; an
# installed target names the install tree instead.
foreach(lib ${ISPSIM_LIBRARIES})
  get_target_property(dirs ${lib} INTERFACE_INCLUDE_DIRECTORIES)
  set(mapped)
  foreach(d ${dirs})
    if(d STREQUAL PROJECT_SOURCE_DIR OR d STREQUAL PROJECT_BINARY_DIR)
      list(APPEND mapped "$<BUILD_INTERFACE:${d}>")
    else()
      list(APPEND mapped "${d}")
    endif()
  endforeach()
  list(APPEND mapped "$<INSTALL_INTERFACE:${ISPSIM_INSTALL_INCLUDEDIR}>")
  list(REMOVE_DUPLICATES mapped)
  set_target_properties(${lib} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${mapped}")
  string(REGEX REPLACE "^ispsim_" "" export_name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

install(TARGETS ispsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${ISPSIM_LIBRARIES} EXPORT ispsimTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT ispsimTargets NAMESPACE ispsim:: DESTINATION ${ISPSIM_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ispsimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ispsimConfig.cmake
  INSTALL_DESTINATION ${ISPSIM_INSTALL_CMAKEDIR}
  PATH_VARS ISPSIM_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ispsimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ispsimConfig.cmake ${PROJECT_BINARY_DIR}/ispsimConfigVersion.cmake
        DESTINATION ${ISPSIM_INSTALL_CMAKEDIR})

# Headers and schemas, and the headers protoc generated beside each .proto.
foreach(area ${ISPSIM_INSTALLED_AREAS})
  get_filename_component(parent ${area} DIRECTORY)
  install(DIRECTORY ${area} DESTINATION ${ISPSIM_INSTALL_INCLUDEDIR}/${parent}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.proto")
  file(GLOB_RECURSE protos RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${area}/*.proto)
  foreach(proto ${protos})
    get_filename_component(folder ${proto} DIRECTORY)
    get_filename_component(stem ${proto} NAME_WE)
    install(FILES ${PROJECT_BINARY_DIR}/${folder}/${stem}.pb.h DESTINATION ${ISPSIM_INSTALL_INCLUDEDIR}/${folder})
  endforeach()
endforeach()

# Data files, laid out as in the source tree (common/data_dir.h).
install(DIRECTORY platforms/ DESTINATION ${ISPSIM_INSTALL_DATADIR}/platforms
        FILES_MATCHING PATTERN "*.textproto" PATTERN "systems" EXCLUDE)
install(DIRECTORY assets DESTINATION ${ISPSIM_INSTALL_DATADIR})
install(DIRECTORY traces/samples DESTINATION ${ISPSIM_INSTALL_DATADIR}/traces)
install(FILES kernels/int/data/brown_calibration.txt DESTINATION ${ISPSIM_INSTALL_DATADIR}/kernels/int/data)
install(FILES tools/plot/ispsim_plot.py tools/plot/workload_plot.py DESTINATION ${ISPSIM_INSTALL_DATADIR}/tools/plot)

# The Python package (tools/python), for Debian's python3: <prefix>/lib/python3.X/
# dist-packages is on its path for /usr/local; for another prefix put that folder
# on PYTHONPATH. _location.py tells the package where bin/ispsim and the data are.
set(ISPSIM_PYTHON /usr/bin/python3 CACHE FILEPATH "the Python interpreter the ispsim package is installed for")
execute_process(COMMAND ${ISPSIM_PYTHON} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                OUTPUT_VARIABLE ISPSIM_PYTHON_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
set(ISPSIM_INSTALL_PYTHONDIR lib/python${ISPSIM_PYTHON_VERSION}/dist-packages CACHE PATH
    "where the ispsim Python package is installed, relative to the prefix")
file(RELATIVE_PATH ISPSIM_PACKAGE_TO_BINARY /prefix/${ISPSIM_INSTALL_PYTHONDIR}/ispsim /prefix/${CMAKE_INSTALL_BINDIR}/ispsim)
file(RELATIVE_PATH ISPSIM_PACKAGE_TO_DATA /prefix/${ISPSIM_INSTALL_PYTHONDIR}/ispsim /prefix/${ISPSIM_INSTALL_DATADIR})
file(WRITE ${PROJECT_BINARY_DIR}/python/_location.py
     "# Written by the install step: paths relative to this package.\n"
     "BINARY = \"${ISPSIM_PACKAGE_TO_BINARY}\"\nDATA = \"${ISPSIM_PACKAGE_TO_DATA}\"\n")
install(DIRECTORY tools/python/ispsim DESTINATION ${ISPSIM_INSTALL_PYTHONDIR} PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/python/_location.py DESTINATION ${ISPSIM_INSTALL_PYTHONDIR}/ispsim)
