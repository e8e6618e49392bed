! kryflow from Fortran: a 2D Poisson matrix built here in CSR (0-based for the C interface) and
! solved with PCG-AMG, the true residual computed here; then, when a Matrix Market file is given,
! that matrix solved with b = A x* for a pseudo-random x*.
!   solve_matrix_f [A.mtx[.gz] [preset [backend]]]
program solve_matrix
  use, intrinsic :: iso_c_binding
  use kryflow
  implicit none
  integer, parameter :: m = 50
  integer(c_int32_t) :: n, nrows, ncols
  integer(c_int64_t) :: nnz, nn
  integer(c_int32_t), allocatable :: row_ptr(:), col_idx(:)
  real(c_double), allocatable :: values(:), b(:), x(:), r(:)
  real(c_double), allocatable, target :: xs(:)
  type(c_ptr) :: backend, A, solver, bv, xv, xsv
  type(kryflow_solve_info) :: info
  character(len=512) :: path, preset, backend_name
  integer :: i, j, k, row, p
  integer(c_int) :: status

  preset = "pcg_amg"
  backend_name = ""
  if (command_argument_count() >= 2) call get_command_argument(2, preset)
  if (command_argument_count() >= 3) call get_command_argument(3, backend_name)
  call check(kryflow_backend_create(trim(backend_name), backend))

  ! The 5-point Laplacian on an m x m grid, rows in natural order, columns sorted.
  n = m * m
  allocate(row_ptr(n + 1), col_idx(5 * n), values(5 * n), b(n), x(n), r(n))
  k = 0
  row_ptr(1) = 0
  do j = 1, m
    do i = 1, m
      row = (j - 1) * m + i
      if (j > 1) call add(row - m, -1.0d0)
      if (i > 1) call add(row - 1, -1.0d0)
      call add(row, 4.0d0)
      if (i < m) call add(row + 1, -1.0d0)
      if (j < m) call add(row + m, -1.0d0)
      row_ptr(row + 1) = k
    end do
  end do
  call check(kryflow_matrix_create_csr(backend, n, n, row_ptr, col_idx(1:k), values(1:k), &
                                       "csr", KRYFLOW_FLOAT64, A))
  call check(kryflow_solver_create(trim(preset), solver, &
                                   ["solver.relative_tolerance=1e-10"]))
  call check(kryflow_solver_setup(solver, A))
  b = 1.0d0
  call check(kryflow_vector_create(backend, int(n, c_int64_t), c_null_ptr, KRYFLOW_MEMORY_HOST, bv))
  call check(kryflow_vector_upload(bv, b, int(n, c_int64_t), KRYFLOW_MEMORY_HOST))
  call check(kryflow_vector_create(backend, int(n, c_int64_t), c_null_ptr, KRYFLOW_MEMORY_HOST, xv))
  call check(kryflow_solver_solve(solver, bv, xv, info))
  call check(kryflow_vector_download(xv, x, int(n, c_int64_t), KRYFLOW_MEMORY_HOST))
  ! The true residual, here.
  do row = 1, n
    r(row) = b(row)
    do p = row_ptr(row) + 1, row_ptr(row + 1)
      r(row) = r(row) - values(p) * x(col_idx(p) + 1)
    end do
  end do
  write (*, '(a, a, a, i0, a, a, a, i0, a, es10.3)') "kryflow ", kryflow_version_string(), &
      " (Fortran): Poisson ", m, "^2, ", kryflow_solve_status_string(info%status), ", ", &
      info%iterations, " iterations, true residual ", norm2(r) / norm2(b)
  if (info%status /= KRYFLOW_SOLVE_CONVERGED .or. norm2(r) / norm2(b) > 1.0d-9) stop 2
  call check(kryflow_vector_destroy(bv))
  call check(kryflow_vector_destroy(xv))
  call check(kryflow_matrix_destroy(A))
  call check(kryflow_solver_destroy(solver))

  ! A Matrix Market file, when given, with the preset as it is.
  if (command_argument_count() >= 1) then
    call get_command_argument(1, path)
    call check(kryflow_matrix_read(backend, trim(path), KRYFLOW_FLOAT64, A))
    call check(kryflow_matrix_size(A, nrows, ncols, nnz))
    nn = int(nrows, c_int64_t)
    allocate(xs(nrows))
    do i = 1, nrows
      xs(i) = sin(real(i, c_double))
    end do
    call check(kryflow_vector_create(backend, nn, c_loc(xs), KRYFLOW_MEMORY_HOST, xsv))
    call check(kryflow_vector_create(backend, nn, c_null_ptr, KRYFLOW_MEMORY_HOST, bv))
    call check(kryflow_vector_create(backend, nn, c_null_ptr, KRYFLOW_MEMORY_HOST, xv))
    call check(kryflow_matrix_apply(A, xsv, bv))
    call check(kryflow_solver_create(trim(preset), solver))
    call check(kryflow_solver_setup(solver, A))
    call check(kryflow_solver_solve(solver, bv, xv, info))
    write (*, '(a, a, a, i0, a, i0, a, a, a, i0, a, es10.3)') "kryflow (Fortran): ", &
        trim(path), ", ", nrows, " rows, ", nnz, " entries: ", &
        kryflow_solve_status_string(info%status), ", ", info%iterations, &
        " iterations, true residual ", info%true_residual_norm / info%rhs_norm
    if (info%status /= KRYFLOW_SOLVE_CONVERGED) stop 2
    call check(kryflow_vector_destroy(xsv))
    call check(kryflow_vector_destroy(bv))
    call check(kryflow_vector_destroy(xv))
    call check(kryflow_matrix_destroy(A))
    call check(kryflow_solver_destroy(solver))
  end if
  call check(kryflow_backend_destroy(backend))

contains

  subroutine add(column, value)
    integer, intent(in) :: column
    real(c_double), intent(in) :: value
    k = k + 1
    col_idx(k) = column - 1
    values(k) = value
  end subroutine

  subroutine check(code)
    integer(c_int), intent(in) :: code
    if (code /= KRYFLOW_SUCCESS) then
      write (*, '(a, i0, a, a)') "kryflow error ", code, ": ", kryflow_error_message()
      stop 1
    end if
  end subroutine

end program solve_matrix
