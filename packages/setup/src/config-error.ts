/** A config file the setup command will not change, and why. Nothing was written. */
export class ConfigRefused extends Error {
  override name = 'ConfigRefused';
}
