! kryflow's Fortran module: iso_c_binding interfaces to the C interface (kryflow.h) and a few
! helpers that take Fortran strings. Compile it with your compiler (.mod files are compiler
! specific) and link libkryflow:
!   gfortran -c kryflow.f90 && gfortran my_solver.f90 kryflow.o -L<prefix>/lib -lkryflow
!
! Handles are type(c_ptr); sizes and indices are integer(c_int32_t), 0-based as in C (a Fortran
! CSR matrix with 1-based row_ptr and col_idx must be shifted by one before the call); entry
! counts integer(c_int64_t). Every function returns a status (KRYFLOW_SUCCESS = 0);
! kryflow_error_message() returns the last error of the calling thread. See kryflow.h for the
! meaning of every argument and error code.
module kryflow
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: KRYFLOW_SUCCESS = 0
  integer(c_int), parameter, public :: KRYFLOW_ERROR_INVALID_ARGUMENT = 1
  integer(c_int), parameter, public :: KRYFLOW_ERROR_INVALID_INPUT = 2
  integer(c_int), parameter, public :: KRYFLOW_ERROR_DIMENSION_MISMATCH = 3
  integer(c_int), parameter, public :: KRYFLOW_ERROR_PARSE = 4
  integer(c_int), parameter, public :: KRYFLOW_ERROR_CONFIG = 5
  integer(c_int), parameter, public :: KRYFLOW_ERROR_NOT_SUPPORTED = 6
  integer(c_int), parameter, public :: KRYFLOW_ERROR_NOT_COMPILED = 7
  integer(c_int), parameter, public :: KRYFLOW_ERROR_BACKEND = 8
  integer(c_int), parameter, public :: KRYFLOW_ERROR_OUT_OF_MEMORY = 9
  integer(c_int), parameter, public :: KRYFLOW_ERROR_INTERNAL = 10

  integer(c_int), parameter, public :: KRYFLOW_SOLVE_CONVERGED = 0
  integer(c_int), parameter, public :: KRYFLOW_SOLVE_MAX_ITERATIONS = 1
  integer(c_int), parameter, public :: KRYFLOW_SOLVE_BREAKDOWN = 2
  integer(c_int), parameter, public :: KRYFLOW_SOLVE_DIVERGED = 3
  integer(c_int), parameter, public :: KRYFLOW_SOLVE_STAGNATED = 4
  integer(c_int), parameter, public :: KRYFLOW_SOLVE_NAN_DETECTED = 5

  integer(c_int), parameter, public :: KRYFLOW_MEMORY_HOST = 0
  integer(c_int), parameter, public :: KRYFLOW_MEMORY_DEVICE = 1
  integer(c_int), parameter, public :: KRYFLOW_FLOAT64 = 0
  integer(c_int), parameter, public :: KRYFLOW_FLOAT32 = 1

  !> The outcome of a solve (kryflow_solve_info of kryflow.h).
  type, bind(c), public :: kryflow_solve_info
    integer(c_int) :: status
    integer(c_int32_t) :: iterations
    real(c_double) :: rhs_norm
    real(c_double) :: initial_residual_norm
    real(c_double) :: residual_norm
    real(c_double) :: true_residual_norm
    real(c_double) :: setup_seconds
    real(c_double) :: solve_seconds
  end type kryflow_solve_info

  public :: kryflow_backend_destroy, kryflow_backend_synchronize
  public :: kryflow_matrix_create_csr_c, kryflow_matrix_create_bsr_c, kryflow_matrix_destroy
  public :: kryflow_matrix_size, kryflow_matrix_update_values, kryflow_matrix_apply
  public :: kryflow_vector_create, kryflow_vector_destroy, kryflow_vector_size
  public :: kryflow_vector_upload, kryflow_vector_download
  public :: kryflow_solver_destroy, kryflow_solver_setup, kryflow_solver_update_values
  public :: kryflow_solver_solve
  public :: kryflow_backend_create, kryflow_matrix_read, kryflow_matrix_create_csr
  public :: kryflow_solver_create, kryflow_error_message, kryflow_version_string
  public :: kryflow_solve_status_string

  interface
    integer(c_int) function kryflow_backend_create_c(name, backend) &
        bind(c, name="kryflow_backend_create")
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(out) :: backend
    end function
    integer(c_int) function kryflow_backend_destroy(backend) bind(c, name="kryflow_backend_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: backend
    end function
    integer(c_int) function kryflow_backend_synchronize(backend) &
        bind(c, name="kryflow_backend_synchronize")
      import :: c_int, c_ptr
      type(c_ptr), value :: backend
    end function

    !> C's kryflow_matrix_create_csr: arrays by address (c_loc, or device addresses).
    integer(c_int) function kryflow_matrix_create_csr_c(backend, num_rows, num_cols, nnz, &
        row_ptr, col_idx, values, memory, format, precision, matrix) &
        bind(c, name="kryflow_matrix_create_csr")
      import :: c_int, c_int32_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: backend
      integer(c_int32_t), value :: num_rows, num_cols
      integer(c_int64_t), value :: nnz
      type(c_ptr), value :: row_ptr, col_idx, values
      integer(c_int), value :: memory
      character(kind=c_char), intent(in) :: format(*)
      integer(c_int), value :: precision
      type(c_ptr), intent(out) :: matrix
    end function
    integer(c_int) function kryflow_matrix_create_bsr_c(backend, num_block_rows, &
        num_block_cols, block_size, nnzb, row_ptr, col_idx, values, memory, precision, matrix) &
        bind(c, name="kryflow_matrix_create_bsr")
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: backend
      integer(c_int32_t), value :: num_block_rows, num_block_cols, block_size
      integer(c_int64_t), value :: nnzb
      type(c_ptr), value :: row_ptr, col_idx, values
      integer(c_int), value :: memory, precision
      type(c_ptr), intent(out) :: matrix
    end function
    integer(c_int) function kryflow_matrix_read_c(backend, path, precision, matrix) &
        bind(c, name="kryflow_matrix_read")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: backend
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: precision
      type(c_ptr), intent(out) :: matrix
    end function
    integer(c_int) function kryflow_matrix_destroy(matrix) bind(c, name="kryflow_matrix_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: matrix
    end function
    integer(c_int) function kryflow_matrix_size(matrix, num_rows, num_cols, nnz) &
        bind(c, name="kryflow_matrix_size")
      import :: c_int, c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: matrix
      integer(c_int32_t), intent(out) :: num_rows, num_cols
      integer(c_int64_t), intent(out) :: nnz
    end function
    integer(c_int) function kryflow_matrix_update_values(matrix, nnz, values, memory) &
        bind(c, name="kryflow_matrix_update_values")
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: matrix
      integer(c_int64_t), value :: nnz
      real(c_double), intent(in) :: values(*)
      integer(c_int), value :: memory
    end function
    integer(c_int) function kryflow_matrix_apply(matrix, x, y) bind(c, name="kryflow_matrix_apply")
      import :: c_int, c_ptr
      type(c_ptr), value :: matrix, x, y
    end function

    !> values: c_loc of the data, or c_null_ptr for a zero vector.
    integer(c_int) function kryflow_vector_create(backend, size, values, memory, vector) &
        bind(c, name="kryflow_vector_create")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: backend
      integer(c_int64_t), value :: size
      type(c_ptr), value :: values
      integer(c_int), value :: memory
      type(c_ptr), intent(out) :: vector
    end function
    integer(c_int) function kryflow_vector_destroy(vector) bind(c, name="kryflow_vector_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: vector
    end function
    integer(c_int) function kryflow_vector_size(vector, size) bind(c, name="kryflow_vector_size")
      import :: c_int, c_int64_t, c_ptr
      type(c_ptr), value :: vector
      integer(c_int64_t), intent(out) :: size
    end function
    integer(c_int) function kryflow_vector_upload(vector, values, size, memory) &
        bind(c, name="kryflow_vector_upload")
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: vector
      real(c_double), intent(in) :: values(*)
      integer(c_int64_t), value :: size
      integer(c_int), value :: memory
    end function
    integer(c_int) function kryflow_vector_download(vector, values, size, memory) &
        bind(c, name="kryflow_vector_download")
      import :: c_int, c_int64_t, c_double, c_ptr
      type(c_ptr), value :: vector
      real(c_double), intent(out) :: values(*)
      integer(c_int64_t), value :: size
      integer(c_int), value :: memory
    end function

    integer(c_int) function kryflow_solver_create_c(configuration, overrides, num_overrides, &
        solver) bind(c, name="kryflow_solver_create")
      import :: c_int, c_int32_t, c_ptr, c_char
      character(kind=c_char), intent(in) :: configuration(*)
      type(c_ptr), intent(in) :: overrides(*)
      integer(c_int32_t), value :: num_overrides
      type(c_ptr), intent(out) :: solver
    end function
    integer(c_int) function kryflow_solver_destroy(solver) bind(c, name="kryflow_solver_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: solver
    end function
    integer(c_int) function kryflow_solver_setup(solver, matrix) &
        bind(c, name="kryflow_solver_setup")
      import :: c_int, c_ptr
      type(c_ptr), value :: solver, matrix
    end function
    integer(c_int) function kryflow_solver_update_values(solver) &
        bind(c, name="kryflow_solver_update_values")
      import :: c_int, c_ptr
      type(c_ptr), value :: solver
    end function
    integer(c_int) function kryflow_solver_solve(solver, b, x, info) &
        bind(c, name="kryflow_solver_solve")
      import :: c_int, c_ptr, kryflow_solve_info
      type(c_ptr), value :: solver, b, x
      type(kryflow_solve_info), intent(out) :: info
    end function

    type(c_ptr) function kryflow_last_error_c() bind(c, name="kryflow_last_error")
      import :: c_ptr
    end function
    type(c_ptr) function kryflow_version_c() bind(c, name="kryflow_version")
      import :: c_ptr
    end function
    type(c_ptr) function kryflow_solve_status_name_c(status) &
        bind(c, name="kryflow_solve_status_name")
      import :: c_ptr, c_int
      integer(c_int), value :: status
    end function
    integer(c_size_t) function c_strlen(text) bind(c, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: text
    end function
  end interface

contains

  !> A Fortran string as a NUL-terminated C string.
  pure function c_string(text) result(c)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=len_trim(text) + 1) :: c
    c = trim(text) // c_null_char
  end function

  !> A NUL-terminated C string (owned by kryflow) as a Fortran string.
  function fortran_string(text) result(f)
    type(c_ptr), intent(in) :: text
    character(len=:), allocatable :: f
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(text)) then
      f = ""
      return
    end if
    n = int(c_strlen(text))
    call c_f_pointer(text, chars, [n])
    allocate(character(len=n) :: f)
    do i = 1, n
      f(i:i) = chars(i)
    end do
  end function

  !> A backend by name: "cuda", "cpu", "reference", or "" (cuda when there is a device).
  integer(c_int) function kryflow_backend_create(name, backend)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(out) :: backend
    kryflow_backend_create = kryflow_backend_create_c(c_string(name), backend)
  end function

  !> A Matrix Market file (plain or gzip), stored as CSR.
  integer(c_int) function kryflow_matrix_read(backend, path, precision, matrix)
    type(c_ptr), intent(in) :: backend
    character(len=*), intent(in) :: path
    integer(c_int), intent(in) :: precision
    type(c_ptr), intent(out) :: matrix
    kryflow_matrix_read = kryflow_matrix_read_c(backend, c_string(path), precision, matrix)
  end function

  !> A CSR matrix from host arrays with 0-based row_ptr (num_rows + 1) and col_idx (nnz).
  integer(c_int) function kryflow_matrix_create_csr(backend, num_rows, num_cols, row_ptr, &
      col_idx, values, format, precision, matrix)
    type(c_ptr), intent(in) :: backend
    integer(c_int32_t), intent(in) :: num_rows, num_cols
    integer(c_int32_t), intent(in), target :: row_ptr(:), col_idx(:)
    real(c_double), intent(in), target :: values(:)
    character(len=*), intent(in) :: format
    integer(c_int), intent(in) :: precision
    type(c_ptr), intent(out) :: matrix
    kryflow_matrix_create_csr = kryflow_matrix_create_csr_c(backend, num_rows, num_cols, &
        int(size(values), c_int64_t), c_loc(row_ptr), c_loc(col_idx), c_loc(values), &
        KRYFLOW_MEMORY_HOST, c_string(format), precision, matrix)
  end function

  !> A solver from a preset name, JSON text or a .json file, then "key=value" overrides.
  integer(c_int) function kryflow_solver_create(configuration, solver, overrides)
    character(len=*), intent(in) :: configuration
    type(c_ptr), intent(out) :: solver
    character(len=*), intent(in), optional :: overrides(:)
    character(kind=c_char, len=:), allocatable, target :: texts(:)
    type(c_ptr), allocatable :: pointers(:)
    integer :: k, n, longest
    n = 0
    if (present(overrides)) n = size(overrides)
    longest = 1
    do k = 1, n
      longest = max(longest, len_trim(overrides(k)) + 1)
    end do
    allocate(character(kind=c_char, len=longest) :: texts(max(n, 1)))
    allocate(pointers(max(n, 1)))
    pointers = c_null_ptr
    do k = 1, n
      texts(k) = trim(overrides(k)) // c_null_char
      pointers(k) = c_loc(texts(k))
    end do
    kryflow_solver_create = kryflow_solver_create_c(c_string(configuration), pointers, &
        int(n, c_int32_t), solver)
  end function

  !> The message of the last failed call on this thread.
  function kryflow_error_message() result(message)
    character(len=:), allocatable :: message
    message = fortran_string(kryflow_last_error_c())
  end function

  function kryflow_version_string() result(version)
    character(len=:), allocatable :: version
    version = fortran_string(kryflow_version_c())
  end function

  !> "converged", "max_iterations", "breakdown", "diverged", "stagnated" or "nan_detected".
  function kryflow_solve_status_string(status) result(name)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: name
    name = fortran_string(kryflow_solve_status_name_c(status))
  end function

end module kryflow
