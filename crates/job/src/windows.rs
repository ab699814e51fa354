//! The job itself, through the Windows API. The command is started suspended, put in the job,
//! and only then let run, so that no process it starts can be born outside the job.

#![allow(unsafe_code)]

use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, JOB_OBJECT_LIMIT_JOB_MEMORY,
    JOB_OBJECT_LIMIT_JOB_TIME, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOB_OBJECT_UILIMIT_DESKTOP,
    JOB_OBJECT_UILIMIT_DISPLAYSETTINGS, JOB_OBJECT_UILIMIT_EXITWINDOWS,
    JOB_OBJECT_UILIMIT_GLOBALATOMS, JOB_OBJECT_UILIMIT_HANDLES, JOB_OBJECT_UILIMIT_READCLIPBOARD,
    JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS, JOB_OBJECT_UILIMIT_WRITECLIPBOARD,
    JOBOBJECT_BASIC_UI_RESTRICTIONS, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOBOBJECTINFOCLASS,
    JobObjectBasicUIRestrictions, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{OpenThread, ResumeThread, THREAD_SUSPEND_RESUME};

use crate::JobLimits;

// The portable values are the API's.
const _: () = {
    assert!(crate::LIMIT_JOB_TIME == JOB_OBJECT_LIMIT_JOB_TIME);
    assert!(crate::LIMIT_ACTIVE_PROCESS == JOB_OBJECT_LIMIT_ACTIVE_PROCESS);
    assert!(crate::LIMIT_JOB_MEMORY == JOB_OBJECT_LIMIT_JOB_MEMORY);
    assert!(crate::LIMIT_DIE_ON_UNHANDLED_EXCEPTION == JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION);
    assert!(crate::LIMIT_KILL_ON_JOB_CLOSE == JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE);
    assert!(crate::UILIMIT_HANDLES == JOB_OBJECT_UILIMIT_HANDLES);
    assert!(crate::UILIMIT_READCLIPBOARD == JOB_OBJECT_UILIMIT_READCLIPBOARD);
    assert!(crate::UILIMIT_WRITECLIPBOARD == JOB_OBJECT_UILIMIT_WRITECLIPBOARD);
    assert!(crate::UILIMIT_SYSTEMPARAMETERS == JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS);
    assert!(crate::UILIMIT_DISPLAYSETTINGS == JOB_OBJECT_UILIMIT_DISPLAYSETTINGS);
    assert!(crate::UILIMIT_GLOBALATOMS == JOB_OBJECT_UILIMIT_GLOBALATOMS);
    assert!(crate::UILIMIT_DESKTOP == JOB_OBJECT_UILIMIT_DESKTOP);
    assert!(crate::UILIMIT_EXITWINDOWS == JOB_OBJECT_UILIMIT_EXITWINDOWS);
};

/// A job with its limits set. Dropping it closes its handle, which (with `kill_on_close`)
/// ends every process still in it.
#[derive(Debug)]
pub struct Job {
    handle: OwnedHandle,
}

impl Job {
    /// An anonymous job with `limits`, held by this process alone.
    pub fn new(limits: &JobLimits) -> io::Result<Self> {
        // SAFETY: no security attributes and no name: a new anonymous job. The handle returned
        // is ours alone; a null one is an error.
        let raw = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if raw.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is an open handle that nothing else owns.
        let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
        let job = Self { handle };
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        info.BasicLimitInformation.LimitFlags = limits.limit_flags();
        info.BasicLimitInformation.ActiveProcessLimit = limits.active_processes;
        info.BasicLimitInformation.PerJobUserTimeLimit = limits.user_time_limit();
        info.JobMemoryLimit = limits.job_memory_limit();
        job.set(JobObjectExtendedLimitInformation, &info)?;
        let ui = limits.ui_restrictions();
        if ui != 0 {
            let restrictions = JOBOBJECT_BASIC_UI_RESTRICTIONS {
                UIRestrictionsClass: ui,
            };
            job.set(JobObjectBasicUIRestrictions, &restrictions)?;
        }
        Ok(job)
    }

    fn raw(&self) -> HANDLE {
        self.handle.as_raw_handle()
    }

    fn set<T>(&self, class: JOBOBJECTINFOCLASS, info: &T) -> io::Result<()> {
        let size = u32::try_from(std::mem::size_of::<T>()).map_err(io::Error::other)?;
        // SAFETY: `info` is a live `T` of `size` bytes, the structure `class` names, and the
        // job's handle is open.
        let done = unsafe {
            SetInformationJobObject(self.raw(), class, std::ptr::from_ref(info).cast(), size)
        };
        if done == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Puts `process` (id `pid`), started with `CREATE_SUSPENDED`, in the job, then lets its
    /// threads run. On an error the process is still suspended; the caller ends it.
    pub fn adopt_suspended(&self, process: RawHandle, pid: u32) -> io::Result<()> {
        // SAFETY: both handles are open for the length of the call (the caller holds the
        // process's child handle).
        if unsafe { AssignProcessToJobObject(self.raw(), process) } == 0 {
            return Err(io::Error::last_os_error());
        }
        resume_threads(pid)
    }

    /// Ends every process in the job now.
    pub fn terminate(&self) {
        // SAFETY: the job's handle is open. A job already empty is no error worth telling.
        unsafe { TerminateJobObject(self.raw(), 1) };
    }
}

/// Resumes every thread of `pid` (a process started suspended has one).
fn resume_threads(pid: u32) -> io::Result<()> {
    // SAFETY: a snapshot of the system's threads; the handle is ours, and an invalid one is an
    // error.
    let raw = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if raw == INVALID_HANDLE_VALUE || raw.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is an open handle that nothing else owns.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(raw) };
    let mut entry = THREADENTRY32 {
        dwSize: u32::try_from(std::mem::size_of::<THREADENTRY32>()).map_err(io::Error::other)?,
        ..THREADENTRY32::default()
    };
    let mut resumed = 0usize;
    // SAFETY: the snapshot is open and `entry` is a THREADENTRY32 whose `dwSize` is set.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opening a thread by id; a null handle is an error, a valid one is ours.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if thread.is_null() {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `thread` is an open handle that nothing else owns.
            let thread = unsafe { OwnedHandle::from_raw_handle(thread) };
            // SAFETY: the thread's handle is open with THREAD_SUSPEND_RESUME.
            if unsafe { ResumeThread(thread.as_raw_handle()) } == u32::MAX {
                return Err(io::Error::last_os_error());
            }
            resumed += 1;
        }
        // SAFETY: as for `Thread32First`.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    if resumed == 0 {
        return Err(io::Error::other(format!(
            "process {pid} has no thread to resume"
        )));
    }
    Ok(())
}
