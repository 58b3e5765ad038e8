// Workload files and request stream files: the first input byte chooses the
// parser (even: a workload file, parsed and checked as `workload gen` does
// before drawing; odd: a stream file, read as `workload dump` does).
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "traces/workload/stream_io.h"
#include "traces/workload/workload_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool stream = data[0] & 1;
  const std::string path = ispsim::fuzz::write_file(stream ? "input.stream" : "input.txtpb", data + 1, size - 1);
  try {
    if (stream) {
      ispsim::workload::StreamReader reader(path);
      ispsim::workload::StreamRecord record;
      while (reader.next(record)) {
      }
    } else {
      (void)ispsim::workload::load_workload(path);
    }
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
