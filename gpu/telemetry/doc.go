// Package telemetry reads GPUs and describes servers as the fleet panel
// shows them: nvidia-smi and rocm-smi as child processes (no cgo), the
// simulator's /sim/gpus, and the ServerState and GPUState types that a run
// snapshot carries.
//
// A machine with no GPU tool simply reports none. It sends no chat
// requests and knows nothing of runs.
package telemetry
