"""Host adapters: a plain Python API (`python`) and the OpenClaw sidecar (`openclaw`)."""
