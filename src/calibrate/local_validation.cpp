// Placeholder translation unit for the calibration library until the CPU/CUDA backends land.
namespace hwplan::calibrate {
int backend_count() { return 0; }
}  // namespace hwplan::calibrate
