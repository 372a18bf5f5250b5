// SPDX-License-Identifier: Apache-2.0
// AicpuDataWriter (aicpu_data_writer.h).
#include "pypto/trace/aicpu_data_writer.h"

#include "pypto/trace/text_out.h"

namespace pypto::trace {

void AicpuDataWriter::write(const Record& rec) {
  os_.write(reinterpret_cast<const char*>(&rec), sizeof rec);
  if (every_records_ && ++records_ % TextOut::kCheckEvery == 0) every_records_();
}

}  // namespace pypto::trace
