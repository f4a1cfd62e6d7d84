-- A store written by corral's SqliteStore at schema version 4 (main as of
-- commit c103973), dumped with Python's sqlite3 iterdump: the input of the
-- migration test (test/unit/store/store_migration_test.cc). Never edit it:
-- it stands for databases in the field.
PRAGMA user_version = 4;
BEGIN TRANSACTION;
CREATE TABLE accounts (
        name TEXT PRIMARY KEY,
        record TEXT NOT NULL
      );
INSERT INTO "accounts" VALUES('admin','{"admin":true,"createdAt":1764588000,"name":"admin","projects":["default"]}');
INSERT INTO "accounts" VALUES('alice','{"admin":false,"createdAt":1764588100,"name":"alice","projects":["ml","default"]}');
CREATE TABLE clusters (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL,
        record TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
INSERT INTO "clusters" VALUES(1,'alpha',9,'{"appliedRevision":4,"changeAuthor":"alice","changeForce":true,"changeMessage":"scale slinky to 1 (--force)","controllerConfigKey":"nodes=slinky-[0-1],cpu-workers-0","createdAt":1764590000,"id":1,"login":{"address":"172.29.3.2","hostKey":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKey root@login"},"name":"alpha","nodes":[{"address":"172.29.3.10","group":"slinky","name":"slinky-0","physicalId":"corral_node_682"},{"address":"172.29.3.11","group":"slinky","name":"slinky-1","physicalId":"corral_node_683"},{"address":"172.29.3.20","group":"cpu-workers","name":"cpu-workers-0","physicalId":"corral_node_684"}],"phase":"draining slinky-1","platformPartitions":["interactive"],"project":"ml","reason":"revision 3 (config set SchedulerParameters=bogus_option) failed and was rolled back: slurmctld refused","revision":6,"spec":{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":1,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"120"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0},"status":"Running","subnet":"172.29.3.0/24","updatedAt":1764590900,"version":9}',1764590000,1764590900);
INSERT INTO "clusters" VALUES(2,'beta',2,'{"appliedRevision":1,"changeAuthor":"api","changeForce":false,"changeMessage":"create","controllerConfigKey":"","createdAt":1764591000,"id":2,"login":{"address":"","hostKey":""},"name":"beta","nodes":[{"address":"172.29.4.10","group":"slinky","name":"slinky-0","physicalId":"corral_node_700"}],"phase":"","platformPartitions":[],"project":"default","reason":"","revision":1,"spec":{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":0,"gpuNodes":1,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"beta","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"60"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[],"volumes":[],"workerGeneration":0},"status":"Terminated","subnet":"172.29.4.0/24","updatedAt":1764591000,"version":2}',1764591000,1764591000);
CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        cluster TEXT NOT NULL,
        time INTEGER NOT NULL,
        type TEXT NOT NULL,
        reason TEXT NOT NULL,
        message TEXT NOT NULL
      );
INSERT INTO "events" VALUES(1,'alpha',1764590000123,'Normal','CreateRequested','create requested (revision 1)');
INSERT INTO "events" VALUES(2,'alpha',1764590031456,'Normal','Running','cluster is running with 3 nodes; login: ssh root@172.29.3.2');
INSERT INTO "events" VALUES(3,'alpha',1764590100000,'Normal','ChangeRequested','revision 2: config set MinJobAge=120');
INSERT INTO "events" VALUES(4,'alpha',1764590101000,'Normal','Applied','revision 2 (config set MinJobAge=120) applied in 1.2 s');
INSERT INTO "events" VALUES(5,'alpha',1764590200000,'Normal','ChangeRequested','revision 3: config set SchedulerParameters=bogus_option');
INSERT INTO "events" VALUES(6,'alpha',1764590203000,'Warning','ChangeFailed','revision 3 (config set SchedulerParameters=bogus_option) failed: slurmctld refused; rolling back to revision 2');
INSERT INTO "events" VALUES(7,'alpha',1764590205000,'Normal','RolledBack','revision 4 (roll back to revision 2 after revision 3 failed) applied in 2.0 s');
INSERT INTO "events" VALUES(8,'alpha',1764590300000,'Normal','ChangeRequested','revision 5: reboot node slinky-1');
INSERT INTO "events" VALUES(9,'alpha',1764590301000,'Normal','PodRecreated','recreating pod slinky-1 (reboot)');
INSERT INTO "events" VALUES(10,'alpha',1764590400000,'Warning','PodRestarted','pod cpu-workers-0 was not running; recreating it');
INSERT INTO "events" VALUES(11,'alpha',1764590500000,'Normal','XidInjected','slinky-0: wrote "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234" to its kernel log');
INSERT INTO "events" VALUES(12,'alpha',1764590501000,'Warning','GpuXid','slinky-0 (corral_node_682): GPU XID 79 on 0000:3b:00 (GPU has fallen off the bus), hardware fault; drained (at 2025-12-01 12:01:41 UTC)');
INSERT INTO "events" VALUES(13,'alpha',1764590600000,'Warning','JobsCancelled','scale --force: cancelling jobs on slinky-[1-2]: 17,18');
INSERT INTO "events" VALUES(14,'beta',1764591000500,'Normal','CreateRequested','create requested (revision 1)');
INSERT INTO "events" VALUES(15,'beta',1764591800000,'Normal','TerminateRequested','terminate requested');
INSERT INTO "events" VALUES(16,'beta',1764591810000,'Normal','Terminated','every pod is stopped');
CREATE TABLE revisions (
        cluster_id INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        spec TEXT NOT NULL,
        author TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL, message TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT 'Pending', error TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (cluster_id, revision)
      );
INSERT INTO "revisions" VALUES(1,1,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":2,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"60"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0}','alice',1764590000,'create','Applied','');
INSERT INTO "revisions" VALUES(1,2,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":2,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"120"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0}','alice',1764590000,'config set MinJobAge=120','Applied','');
INSERT INTO "revisions" VALUES(1,3,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":2,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"120","SchedulerParameters":"bogus_option"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0}','alice',1764590000,'config set SchedulerParameters=bogus_option','Failed','slurmctld refused the configuration: fatal: bogus_option');
INSERT INTO "revisions" VALUES(1,4,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":2,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"120"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0}','corral',1764590000,'roll back to revision 2 after revision 3 failed','Applied','');
INSERT INTO "revisions" VALUES(1,5,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":3,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"120"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0}','alice',1764590000,'scale slinky to 3','Superseded','');
INSERT INTO "revisions" VALUES(1,6,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":1,"gpuNodes":1,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"alpha","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"120"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[{"name":"bob","sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBobsKey000000000000000000000000000000 bob"],"uid":2001}],"volumes":[{"hostPath":"/var/lib/corral/volumes/datasets","path":"/datasets","readOnly":true,"volume":"datasets"}],"workerGeneration":0}','alice',1764590900,'scale slinky to 1 (--force)','Pending','');
INSERT INTO "revisions" VALUES(2,1,'{"containers":{"cachePath":"/shared/enroot-cache","insecureRegistries":["registry:5000"],"registry":true},"controllerGeneration":0,"cpuNodes":0,"gpuNodes":1,"gpusPerNode":8,"image":{"id":"5d1c0ffee0000000000000000000000000000000000000000000000000000001","name":"debian13-slurm24.11","slurmVersion":"24.11"},"loginGeneration":0,"name":"beta","nodeGenerations":{"slinky-1":1},"partitions":[{"name":"debug","nodes":"slinky-0","options":{"MaxTime":"1:00:00"}}],"slurmConf":{"MinJobAge":"60"},"sshKeys":["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFixtureKeyForTheMigrationTest0000000000 alice@laptop"],"users":[],"volumes":[],"workerGeneration":0}','api',1764591000,'create','Applied','');
CREATE TABLE sequences (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      );
INSERT INTO "sequences" VALUES('subnet',3);
INSERT INTO "sequences" VALUES('physical-id',1);
CREATE TABLE tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        hash TEXT NOT NULL UNIQUE,
        user TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
INSERT INTO "tokens" VALUES(1,'0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0','admin','bootstrap',1764588000);
INSERT INTO "tokens" VALUES(2,'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90','alice','laptop',1764588200);
CREATE TABLE volumes (
        name TEXT PRIMARY KEY,
        record TEXT NOT NULL
      );
INSERT INTO "volumes" VALUES('datasets','{"createdAt":1764589000,"hostPath":"/var/lib/corral/volumes/datasets","managed":true,"name":"datasets","project":"ml","type":"pfs"}');
INSERT INTO "volumes" VALUES('scratch','{"createdAt":1764589100,"hostPath":"/srv/scratch","managed":false,"name":"scratch","project":"default","type":"sfs"}');
CREATE INDEX events_by_cluster ON events (cluster, id);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('clusters',2);
INSERT INTO "sqlite_sequence" VALUES('events',16);
INSERT INTO "sqlite_sequence" VALUES('tokens',3);
COMMIT;
