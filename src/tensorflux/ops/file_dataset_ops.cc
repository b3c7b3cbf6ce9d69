// Source datasets that read files (TF's ops TFRecordDataset, TextLineDataset and CSVDataset; IdxDataset is
// TensorFlux's, behind tx.data.experimental.IdxDataset). Kernels: data/file_datasets.cc.
#include "tensorflux/framework/op.h"
#include "tensorflux/framework/shape_inference.h"

namespace tensorflux {

REGISTER_OP("TFRecordDataset")
    .Input("filenames: string")
    .Input("compression_type: string")
    .Input("buffer_size: int64")
    .Output("handle: variant")
    .SetIsStateful()
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("The records of TFRecord files (scalar strings), file after file. compression_type "
         "'', 'GZIP' (gzip is also detected from the file) or 'ZLIB'; buffer_size is accepted "
         "for TF's signature (reads use a fixed 256 KiB buffer).");

REGISTER_OP("TextLineDataset")
    .Input("filenames: string")
    .Input("compression_type: string")
    .Input("buffer_size: int64")
    .Output("handle: variant")
    .SetIsStateful()
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("The lines of text files (scalar strings without their line ending), file after file.");

REGISTER_OP("CSVDataset")
    .Input("filenames: string")
    .Input("compression_type: string")
    .Input("buffer_size: int64")
    .Input("header: bool")
    .Input("field_delim: string")
    .Input("use_quote_delim: bool")
    .Input("na_value: string")
    .Input("select_cols: int64")
    .Input("record_defaults: output_types")
    .Output("handle: variant")
    .Attr("output_types: list({float,double,int32,int64,string}) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("One element per CSV line of the files (a tuple of scalars typed by record_defaults, "
         "DecodeCSV's rules); header skips each file's first line. Quoted fields cannot span "
         "lines.");

REGISTER_OP("IdxDataset")
    .Input("filename: string")
    .Output("handle: variant")
    .Attr("output_types: list(type) >= 1")
    .Attr("output_shapes: list(shape) >= 1")
    .SetIsStateful()
    .SetShapeFn(shape_inference::ScalarShape)
    .Doc("One element per item of an IDX file (plain or gzip): dimension 0 is the item count, "
         "an element has the remaining dimensions (e.g. uint8 [28, 28]). output_types / "
         "output_shapes must match the file's header. A file of at most 256 MiB decoded is "
         "decoded once (at the first MakeIterator) and kept by the kernel while the file's "
         "size and mtime are unchanged: every iterator of its datasets hands out slices of that "
         "one buffer (no copy), so the kernel holds at most 256 MiB. Larger files, and files "
         "that cannot be decoded whole (their error then comes at the item where it occurs), "
         "are streamed item by item.");

}  // namespace tensorflux
