<?php
/**
 * The plugin's header, version and readme agree.
 *
 * @package StrataAnalytics
 */

use PHPUnit\Framework\TestCase;

final class PackageTest extends TestCase {

	/** Reads "Name: value" header lines, as WordPress's get_file_data does. */
	private function header( $file, $name ) {
		$text = file_get_contents( dirname( __DIR__, 2 ) . '/' . $file );
		$this->assertSame( 1, preg_match( '/^[ \t\/*#@]*' . preg_quote( $name, '/' ) . ':(.*)$/mi', $text, $m ), "$file has no $name" );
		return trim( $m[1] );
	}

	public function test_versions_agree() {
		$main = dirname( __DIR__, 2 ) . '/strata-analytics.php';
		$this->assertSame( '0.3.1', $this->header( 'strata-analytics.php', 'Version' ) );
		$this->assertStringContainsString( "define( 'STRATA_ANALYTICS_VERSION', '0.3.1' );", file_get_contents( $main ) );
		$this->assertSame( '0.3.1', $this->header( 'readme.txt', 'Stable tag' ) );
		$this->assertStringContainsString( '0.3.1: released under the version', file_get_contents( dirname( __DIR__, 2 ) . '/readme.txt' ) );
	}

	public function test_header() {
		$this->assertSame( 'Strata Analytics', $this->header( 'strata-analytics.php', 'Plugin Name' ) );
		$this->assertSame( 'strata-analytics', $this->header( 'strata-analytics.php', 'Text Domain' ) );
		$this->assertSame( 'GPL-2.0-or-later', $this->header( 'strata-analytics.php', 'License' ) );
		$this->assertSame( 'GPL-2.0-or-later', $this->header( 'readme.txt', 'License' ) );
	}
}
