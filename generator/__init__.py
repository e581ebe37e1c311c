"""bcfg: compile .bcfg specs into PyTorch quantization BackendConfig modules."""

__version__ = "0.1.0"
