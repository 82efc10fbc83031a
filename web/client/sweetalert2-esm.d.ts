declare module 'sweetalert2/dist/sweetalert2.esm.js' {
  const Swal: unknown;
  export default Swal;
}
