import { submitConfirmed } from './submit-confirmed.ts';
import { sweetAlert } from './sweetalert.ts';

/**
 * docs/behaviour.md §7: a delete form is submitted only after the confirmation dialog says yes. Without
 * JavaScript the form submits directly (the server still checks the role and the CSRF token).
 */
export function installDeleteConfirmation(): void {
  document.addEventListener('submit', (event) => {
    const form = event.target as HTMLFormElement;
    if (!form.matches('form[data-confirm-delete]')) return;
    event.preventDefault();
    void sweetAlert()
      .then((swal) =>
        swal.fire({
          titleText: 'Are you sure?',
          text: 'This action cannot be undone!',
          icon: 'warning',
          showCancelButton: true,
          confirmButtonText: 'Yes, delete it!',
          cancelButtonText: 'Cancel',
          // It cannot be undone: the button a keyboard user lands on (and a second Enter presses) is the
          // safe one. "Yes, delete it!" is one Shift+Tab, or a click, away.
          focusCancel: true,
        }),
      )
      .then((result) => {
        if (result.isConfirmed) submitConfirmed(form);
      });
  });
}
