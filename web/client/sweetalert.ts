import type { SweetAlertOptions, SweetAlertResult } from 'sweetalert2';

type Swal = {
  fire(options: SweetAlertOptions): Promise<SweetAlertResult<unknown>>;
  showValidationMessage(message: string): void;
};

let loading: Promise<Swal> | undefined;

/**
 * SweetAlert2, loaded on first use. The ESM build is used because the default entry injects a
 * <style> tag that the Content-Security-Policy blocks; its stylesheet ships inside app.css.
 */
export function sweetAlert(): Promise<Swal> {
  loading ??= import('sweetalert2/dist/sweetalert2.esm.js').then(
    (m) => (m as unknown as { default: Swal }).default,
  );
  return loading;
}
